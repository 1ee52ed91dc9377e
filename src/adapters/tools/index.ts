// `wasmcell/tools`: the tool definitions as plain JSON Schema for any function-calling API (OpenAI
// Chat Completions and Responses, Anthropic Messages), and one `handleToolCall(name, args)` that runs a
// call and returns the text to hand back to the model. The AI SDK and MCP adapters are built from the
// same definitions (run-code.ts, code-mode.ts), so names, descriptions, schemas and output match.

import { defineCodeModeTool, type BridgedTool, type CodeModeOptions } from "./code-mode.ts";
import type { ToolOutput } from "./format.ts";
import { defineRunCodeTool, type CallHooks, type CodeTool, type RunCodeToolOptions } from "./run-code.ts";

export { DEFAULT_CODE_MODE } from "./defaults.ts";
export {
  CODE_MODE_TOOL_NAME,
  defineCodeModeTool,
  schemaToType,
  type BridgedTool,
  type CodeModeInput,
  type CodeModeOptions,
} from "./code-mode.ts";
export { DEFAULT_FORMAT, formatResult, type FormatOptions, type ToolOutput, type ToolOutputFile } from "./format.ts";
export {
  RUN_CODE_TOOL_NAME,
  defineRunCodeTool,
  type CallHooks,
  type CodeTool,
  type CodeToolOptions,
  type RunCodeInput,
  type RunCodeToolOptions,
} from "./run-code.ts";
export { encodeValue } from "../../core/values.ts";
export { renderValue } from "./render-value.ts";

export interface ToolkitOptions extends RunCodeToolOptions {
  /** Also offer code mode over these host tools (JSON in, JSON out). */
  codeMode?: Omit<CodeModeOptions, "sandbox"> & { tools: Record<string, BridgedTool> };
}

/** OpenAI Chat Completions `tools[]` entry. */
export interface OpenAIChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}
/** OpenAI Responses API `tools[]` entry. */
export interface OpenAIResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: false;
}
/** Anthropic Messages `tools[]` entry. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface Toolkit extends AsyncDisposable {
  readonly tools: readonly CodeTool<unknown>[];
  /** For `openai.chat.completions.create({ tools })`. */
  openai(): OpenAIChatTool[];
  /** For `openai.responses.create({ tools })`. */
  openaiResponses(): OpenAIResponsesTool[];
  /** For `anthropic.messages.create({ tools })`. */
  anthropic(): AnthropicTool[];
  /**
   * Runs one tool call and returns the text for the model. `args` may be the JSON string a provider
   * sends (OpenAI's `arguments`) or the parsed object (Anthropic's `input`). Never throws for bad
   * arguments or failing code: the text says what went wrong.
   */
  handleToolCall(name: string, args: unknown, hooks?: CallHooks): Promise<string>;
  /** Like `handleToolCall`, with the error flag and the files (images as base64). */
  callTool(name: string, args: unknown, hooks?: CallHooks): Promise<ToolOutput>;
  /** Closes the sessions the tools hold (`session: true`); the sandbox stays open. */
  close(): Promise<void>;
}

export function createToolkit(options: ToolkitOptions): Toolkit {
  const tools: CodeTool<unknown>[] = [defineRunCodeTool(options)];
  if (options.codeMode) {
    const { tools: bridged, ...rest } = options.codeMode;
    tools.push(defineCodeModeTool({ sandbox: options.sandbox, ...rest }, bridged));
  }
  const byName = new Map(tools.map((t) => [t.name, t]));
  const callTool = async (name: string, args: unknown, hooks?: CallHooks): Promise<ToolOutput> => {
    const tool = byName.get(name);
    if (!tool) {
      return {
        isError: true,
        text: `unknown tool "${name}"; available: ${[...byName.keys()].join(", ")}`,
        files: [],
        results: [],
      };
    }
    let input = args;
    if (typeof args === "string") {
      try {
        input = JSON.parse(args) as unknown;
      } catch {
        return {
          isError: true,
          text: "invalid input: the arguments are not valid JSON. Nothing was run.",
          files: [],
          results: [],
        };
      }
    }
    return tool.call(input, hooks);
  };
  const close = async () => {
    await Promise.allSettled(tools.map((t) => t.close()));
  };
  return {
    tools,
    openai: () =>
      tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.jsonSchema },
      })),
    openaiResponses: () =>
      tools.map((t) => ({
        type: "function",
        name: t.name,
        description: t.description,
        parameters: t.jsonSchema,
        strict: false,
      })),
    anthropic: () => tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.jsonSchema })),
    callTool,
    handleToolCall: async (name, args, hooks) => (await callTool(name, args, hooks)).text,
    close,
    [Symbol.asyncDispose]: close,
  };
}
