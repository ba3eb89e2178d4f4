/** A content block of a ToolMessage, in LangChain's standard shapes. */
export type ToolContentBlock = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

interface McpContentLike {
  type: string;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  resource?: unknown;
  uri?: unknown;
  name?: unknown;
}

function describeBlock(block: McpContentLike): ToolContentBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: String(block.text ?? "") };
    case "image":
      return { type: "image", data: String(block.data ?? ""), mimeType: String(block.mimeType ?? "image/png") };
    case "audio":
      return { type: "text", text: `[audio ${String(block.mimeType ?? "")} omitted: the model cannot take audio from a tool]` };
    case "resource": {
      const resource = (block.resource ?? {}) as { uri?: unknown; text?: unknown; blob?: unknown; mimeType?: unknown };
      if (typeof resource.text === "string") return { type: "text", text: resource.text };
      const size = typeof resource.blob === "string" ? ` (${Math.floor((resource.blob.length * 3) / 4)} bytes)` : "";
      return {
        type: "text",
        text: `[binary resource ${String(resource.uri ?? "")} ${String(resource.mimeType ?? "")}${size} not shown]`,
      };
    }
    case "resource_link":
      return { type: "text", text: `[resource link: ${String(block.name ?? "")} ${String(block.uri ?? "")}]` };
    default:
      return { type: "text", text: `[unsupported MCP content type "${block.type}"]` };
  }
}

/** Keeps the head and the tail of an over-long text, saying how much was left out between them. */
export function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const omitted = text.length - maxChars;
  const marker = `\n[… ${omitted} characters of this tool result omitted (result_max_chars: ${maxChars}) …]\n`;
  const head = Math.ceil(maxChars / 2);
  return `${text.slice(0, head)}${marker}${text.slice(text.length - (maxChars - head))}`;
}

// A base64 image beyond this is not sent on: models cap image sizes far below it, and it would fill the context.
const MAX_IMAGE_BASE64_CHARS = 8 * 1024 * 1024;

/**
 * Turns an MCP tool result's content into ToolMessage content: a plain string when it is all text (the common
 * case, and what every provider accepts), otherwise a list of text and image blocks. The text, all blocks
 * together, is held to `maxChars`; an oversized image is replaced by a note.
 */
export function toToolContent(content: readonly McpContentLike[], structured?: unknown, maxChars = 40_000): string | ToolContentBlock[] {
  const blocks = content
    .map(describeBlock)
    .map(
      (b): ToolContentBlock =>
        b.type === "image" && b.data.length > MAX_IMAGE_BASE64_CHARS
          ? { type: "text", text: `[image ${b.mimeType} of ${Math.floor((b.data.length * 3) / 4)} bytes not shown: too large]` }
          : b,
    );
  if (blocks.length === 0 && structured !== undefined) return cutMiddle(JSON.stringify(structured), maxChars);
  if (blocks.every((b) => b.type === "text")) return cutMiddle(blocks.map((b) => (b as { text: string }).text).join("\n"), maxChars);
  // Mixed content: the text budget is shared by the text blocks, in order.
  let budget = maxChars;
  return blocks.map((b) => {
    if (b.type !== "text") return b;
    const text = cutMiddle(b.text, Math.max(1000, budget));
    budget = Math.max(0, budget - text.length);
    return { type: "text", text };
  });
}

/** The message of an `isError` result: its text, or a generic line when the server sent none. */
export function errorText(content: readonly McpContentLike[]): string {
  const text = content
    .filter((b) => b.type === "text")
    .map((b) => String(b.text ?? ""))
    .join("\n")
    .trim();
  return text || "the server reported an error without a message";
}
