// A tool output as content parts, the shape MCP's CallToolResult has (and any client that shows
// text, images and resources): the text first, then the files (images as images, the rest as
// embedded resources), then the display items' images as images. The display items' other types
// (HTML, Markdown, JSON, SVG) go in `structuredContent.results`, beside the text that already carries
// each item's text/plain. Shared formatting: the MCP server (whichever SDK it is built on) only wraps
// this.

import type { DisplayItem } from "../../core/types.ts";
import type { ToolOutput } from "./format.ts";

export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "resource"; resource: { uri: string; mimeType: string; blob: string } }
  | { type: "resource"; resource: { uri: string; mimeType: string; text: string } };

export interface ToolContent {
  content: ContentPart[];
  /** The display items without their images (those are image parts), when the run displayed any. */
  structuredContent?: { results: DisplayItem[] };
  isError?: true;
}

/** Image types a client shows as image content. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function toolContent(output: ToolOutput): ToolContent {
  const content: ContentPart[] = [{ type: "text", text: output.text }];
  for (const f of output.files) {
    const uri = `wasmcell://output/${f.path.split("/").map(encodeURIComponent).join("/")}`;
    if (f.base64 !== undefined && f.mimeType.startsWith("image/")) {
      content.push({ type: "image", data: f.base64, mimeType: f.mimeType });
    } else if (f.base64 !== undefined) {
      content.push({ type: "resource", resource: { uri, mimeType: f.mimeType, blob: f.base64 } });
    } else if (f.text !== undefined) {
      content.push({ type: "resource", resource: { uri, mimeType: f.mimeType, text: f.text } });
    }
  }
  const results: DisplayItem[] = [];
  for (const item of output.results) {
    const rest: Record<string, unknown> = {};
    for (const [type, value] of Object.entries(item.data)) {
      if (IMAGE_TYPES.has(type) && typeof value === "string")
        content.push({ type: "image", data: value, mimeType: type });
      else rest[type] = value;
    }
    results.push({ data: rest as DisplayItem["data"], main: item.main });
  }
  return {
    content,
    ...(results.length > 0 ? { structuredContent: { results } } : {}),
    ...(output.isError ? { isError: true as const } : {}),
  };
}
