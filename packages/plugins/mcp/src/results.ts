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

/**
 * Turns an MCP tool result's content into ToolMessage content: a plain string when it is all text (the common
 * case, and what every provider accepts), otherwise a list of text and image blocks.
 */
export function toToolContent(content: readonly McpContentLike[], structured?: unknown): string | ToolContentBlock[] {
  const blocks = content.map(describeBlock);
  if (blocks.length === 0 && structured !== undefined) return JSON.stringify(structured);
  if (blocks.every((b) => b.type === "text")) return blocks.map((b) => (b as { text: string }).text).join("\n");
  return blocks;
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
