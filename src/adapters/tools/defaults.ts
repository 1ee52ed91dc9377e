// The tool adapters' defaults: the model-facing output caps and code mode's caps, in one place
// (docs/options.md lists them; test/options/options.test.ts checks it).

/** The tool adapters' model-facing output caps (`run_code`'s `output` option; see adapters/tools/format.ts). */
export const DEFAULT_FORMAT = Object.freeze({
  /** Cap on the whole text handed to the model, in characters. */
  maxChars: 8_000,
  /** Images up to this size are inlined as base64 image content. */
  maxImageBytes: 4 * 1024 * 1024,
  /** Text files up to this size are inlined as text. */
  maxInlineTextBytes: 16 * 1024,
});

/** Code mode's caps (adapters/tools/code-mode.ts). */
export const DEFAULT_CODE_MODE = Object.freeze({
  /** Tool calls one program may make. */
  maxToolCalls: 32,
  /** Size cap on one tool's JSON output handed to the guest, in bytes. */
  maxToolOutputBytes: 256 * 1024,
});
