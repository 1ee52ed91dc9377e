// Placeholder until the pyodide engine lands.
import { EngineUnavailableError } from "../../errors.ts";
import type { EngineFactory } from "../engine.ts";

export const createEngine: EngineFactory = () => Promise.reject(new EngineUnavailableError("pyodide", "not built yet"));
