// Placeholder until the native engine lands.
import { EngineUnavailableError } from "../../errors.ts";
import type { EngineFactory } from "../engine.ts";

export const createEngine: EngineFactory = () => Promise.reject(new EngineUnavailableError("native", "not built yet"));
