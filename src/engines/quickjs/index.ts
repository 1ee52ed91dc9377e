// Placeholder until the quickjs engine lands.
import { EngineUnavailableError } from "../../errors.ts";
import type { EngineFactory } from "../engine.ts";

export const createEngine: EngineFactory = () => Promise.reject(new EngineUnavailableError("quickjs", "not built yet"));
