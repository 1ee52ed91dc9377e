// A scripted language model on top of the AI SDK's own MockLanguageModelV4: each step either calls a
// tool or answers with text built from what the model was sent (so a test can prove the model *read*
// the tool result, not just that a tool ran).

import { MockLanguageModelV4 } from "ai/test";

export type Step = { call: string; input: unknown } | { say: (toolResults: ToolResultSeen[]) => string };

/** A tool result as the model received it in its prompt. */
export interface ToolResultSeen {
  toolName: string;
  type: string;
  /** The text part (text / error-text / content's text). */
  text: string;
  /** Non-text parts of `content` outputs (files, images). */
  files: { mediaType: string; filename?: string; base64: string }[];
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

export function scriptedModel(steps: Step[]): MockLanguageModelV4 & { seen: ToolResultSeen[][] } {
  let index = 0;
  const seen: ToolResultSeen[][] = [];
  const model = new MockLanguageModelV4({
    doGenerate: (options) => {
      const results = toolResultsIn(options.prompt);
      seen.push(results);
      const step = steps[index++];
      if (!step) throw new Error(`scripted model: no step ${index}`);
      if ("call" in step) {
        return Promise.resolve({
          content: [
            {
              type: "tool-call" as const,
              toolCallId: `call-${index}`,
              toolName: step.call,
              input: JSON.stringify(step.input),
            },
          ],
          finishReason: { unified: "tool-calls" as const, raw: undefined },
          usage,
          warnings: [],
        });
      }
      return Promise.resolve({
        content: [{ type: "text" as const, text: step.say(results) }],
        finishReason: { unified: "stop" as const, raw: undefined },
        usage,
        warnings: [],
      });
    },
  });
  return Object.assign(model, { seen });
}

/** The tool results in the latest tool message of a prompt. */
function toolResultsIn(prompt: readonly unknown[]): ToolResultSeen[] {
  const last = [...prompt].reverse().find((m) => (m as { role: string }).role === "tool") as
    { content: unknown[] } | undefined;
  if (!last) return [];
  return last.content
    .filter((p) => (p as { type: string }).type === "tool-result")
    .map((p) => {
      const part = p as { toolName: string; output: { type: string; value: unknown } };
      const out = part.output;
      const seen: ToolResultSeen = { toolName: part.toolName, type: out.type, text: "", files: [] };
      if (out.type === "text" || out.type === "error-text") seen.text = String(out.value);
      else if (out.type === "json" || out.type === "error-json") seen.text = JSON.stringify(out.value);
      else if (out.type === "content") {
        for (const item of out.value as {
          type: string;
          text?: string;
          mediaType?: string;
          filename?: string;
          data?: { type: string; data: unknown };
        }[]) {
          if (item.type === "text") seen.text += item.text ?? "";
          else if (item.type === "file" && item.data?.type === "data") {
            const data = item.data.data;
            const base64 = typeof data === "string" ? data : Buffer.from(data as Uint8Array).toString("base64");
            seen.files.push({
              mediaType: item.mediaType ?? "",
              ...(item.filename ? { filename: item.filename } : {}),
              base64,
            });
          }
        }
      }
      return seen;
    });
}
