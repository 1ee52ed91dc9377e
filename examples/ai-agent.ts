// An agent loop with the AI SDK and wasmcell: `run_code` (JavaScript, TypeScript, Python) and code mode
// over an application tool. Run it with `node examples/ai-agent.ts`.
//
// With AI_GATEWAY_API_KEY set, a real model answers through the AI Gateway (WASMCELL_MODEL picks it).
// Without a key, the AI SDK's own mock model plays a scripted agent, so the example runs offline.

import { generateText, isStepCount, tool, type LanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { codeModeTool, runCodeTool } from "../src/adapters/ai/index.ts";
import { createSandbox } from "../src/index.ts";

await using sandbox = await createSandbox({ limits: { timeoutMs: 3_000 }, python: { pool: 1, prewarm: false } });

// An ordinary application tool. Routed to code mode below, so the model calls it from code.
const getPrice = tool({
  description: "The unit price of a product, in cents.",
  inputSchema: z.object({ sku: z.string() }),
  execute: ({ sku }) => ({ sku, cents: { apple: 45, pear: 60, plum: 30 }[sku] ?? 0 }),
});

const model: LanguageModel = process.env.AI_GATEWAY_API_KEY
  ? (process.env.WASMCELL_MODEL ?? "anthropic/claude-sonnet-4.5")
  : offlineAgent();

const result = await generateText({
  model,
  tools: { run_code: runCodeTool({ sandbox }), code_mode: codeModeTool({ sandbox }), getPrice },
  experimental_toolCallers: { getPrice: ["code_mode"] },
  stopWhen: isStepCount(6),
  prompt: "What is the mean of the first 20 primes? Then: what do 3 apples, 2 pears and 5 plums cost?",
});

for (const step of result.steps) {
  for (const call of step.toolCalls) console.log(`→ ${call.toolName} ${JSON.stringify(call.input)}`);
  for (const r of step.toolResults) console.log(`← ${(r.output as { text: string }).text.replace(/\n/g, "\n  ")}`);
}
console.log(`\nanswer: ${result.text}`);

/** The AI SDK's mock model, scripted like an agent: two tool calls, then an answer built from what it read. */
function offlineAgent(): MockLanguageModelV4 {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 0, text: 0, reasoning: undefined },
  };
  const calls = [
    {
      toolName: "run_code",
      input: {
        language: "python",
        code: "primes = [n for n in range(2, 100) if all(n % d for d in range(2, n))][:20]\nprint(primes)\nsum(primes) / len(primes)",
      },
    },
    {
      toolName: "code_mode",
      input: {
        code: "const order = { apple: 3, pear: 2, plum: 5 };\nlet cents = 0;\nfor (const [sku, n] of Object.entries(order)) cents += n * (await tools.getPrice({ sku })).cents;\n(cents / 100).toFixed(2)",
      },
    },
  ];
  let step = 0;
  return new MockLanguageModelV4({
    doGenerate: ({ prompt }) => {
      const call = calls[step++];
      if (call) {
        return Promise.resolve({
          content: [
            {
              type: "tool-call" as const,
              toolCallId: `call-${step}`,
              toolName: call.toolName,
              input: JSON.stringify(call.input),
            },
          ],
          finishReason: { unified: "tool-calls" as const, raw: undefined },
          usage,
          warnings: [],
        });
      }
      // Read the values back out of the tool results the model was sent.
      const values = prompt
        .filter((m) => m.role === "tool")
        .flatMap((m) => m.content)
        .map((part) =>
          part.type === "tool-result" && part.output.type === "text"
            ? (/value: (.*)/.exec(part.output.value)?.[1] ?? "?")
            : "?",
        );
      const text = `The mean of the first 20 primes is ${values[0]}; the fruit costs $${values[1]?.replace(/"/g, "")}.`;
      return Promise.resolve({
        content: [{ type: "text" as const, text }],
        finishReason: { unified: "stop" as const, raw: undefined },
        usage,
        warnings: [],
      });
    },
  });
}
