import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { boundToolNames } from "@antler/kernel/testing/replay";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ChatMessage, ToolMessage } from "@langchain/core/messages";

/** One message as a cassette matches it: only what decides the model's answer, never ids or timestamps. */
export interface NormalizedMessage {
  role: string;
  content: string;
  tool_calls?: NormalizedToolCall[];
  tool_call_id?: string;
}

export interface NormalizedToolCall {
  name: string;
  args: unknown;
  id: string | null;
}

/** What a cassette matches on: the conversation and the sorted names of the bound tools. */
export interface NormalizedRequest {
  messages: NormalizedMessage[];
  tools: string[];
}

/** Machine-specific folders that are replaced by placeholders, so a cassette replays on another machine. */
export interface NormalizationDirs {
  /** Antler's data folder (`base_dir`), shown as `<base_dir>`. */
  baseDir?: string | undefined;
  /** Folder of config.yaml, shown as `<config_dir>`. */
  configDir?: string | undefined;
  /** The OS temp folder, shown as `<tmp>`. Default: `os.tmpdir()`. */
  tmpDir?: string | undefined;
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const HEX_ID = /\b[0-9a-f]{32}\b/gi;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function variants(dir: string | undefined): string[] {
  if (!dir || dir.length <= 1) return [];
  const out = new Set([dir.replace(/[\\/]+$/, "")]);
  try {
    // macOS hands out /var/... while the real path is /private/var/...; either may appear in a prompt.
    out.add(realpathSync(dir).replace(/[\\/]+$/, ""));
  } catch {
    // A folder that does not exist (yet) is only matched literally.
  }
  return [...out].filter((d) => d.length > 1);
}

/** Builds the scrubber once per model; it runs on every string of every request. */
export function createScrubber(dirs: NormalizationDirs = {}): (text: string) => string {
  const replacements: Array<{ prefix: string; placeholder: string }> = [];
  for (const prefix of variants(dirs.baseDir)) replacements.push({ prefix, placeholder: "<base_dir>" });
  for (const prefix of variants(dirs.configDir)) replacements.push({ prefix, placeholder: "<config_dir>" });
  for (const prefix of variants(dirs.tmpDir ?? tmpdir())) replacements.push({ prefix, placeholder: "<tmp>" });
  // Longest first: the base dir usually sits inside the config dir, which may itself sit in the temp dir.
  replacements.sort((a, b) => b.prefix.length - a.prefix.length);
  const patterns = replacements.map(({ prefix, placeholder }) => ({
    re: new RegExp(`${escapeRegExp(prefix)}(?![\\w.-])`, "g"),
    placeholder,
  }));
  return (text: string) => {
    let out = text;
    for (const { re, placeholder } of patterns) out = out.replace(re, placeholder);
    return out.replace(UUID, "<id>").replace(HEX_ID, "<id>").replace(ISO_TIME, "<time>");
  };
}

function scrubDeep(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, scrub));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, scrub)]));
  }
  return value;
}

function roleOf(message: BaseMessage): string {
  if (ChatMessage.isInstance(message)) return message.role;
  const type = message.getType();
  if (type === "human") return "user";
  if (type === "ai") return "assistant";
  return type;
}

/** The name of a tool in any shape `bindTools` accepts (LangChain tool, OpenAI function, plain definition). */
export function normalizeRequest(
  messages: readonly BaseMessage[],
  tools: readonly BindToolsInput[] | undefined,
  scrub: (text: string) => string,
): NormalizedRequest {
  return {
    messages: messages.map((message) => {
      const normalized: NormalizedMessage = { role: roleOf(message), content: scrub(message.text) };
      if (AIMessage.isInstance(message) && message.tool_calls?.length) {
        normalized.tool_calls = message.tool_calls.map((call) => ({
          name: call.name,
          args: scrubDeep(call.args, scrub),
          id: call.id === undefined ? null : scrub(call.id),
        }));
      }
      if (ToolMessage.isInstance(message)) normalized.tool_call_id = scrub(message.tool_call_id);
      return normalized;
    }),
    tools: boundToolNames(tools),
  };
}

/** JSON with object keys sorted, so equal requests serialize (and hash) equally whatever the key order. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => stableStringify(v ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function requestHash(request: NormalizedRequest): string {
  return createHash("sha256").update(stableStringify(request)).digest("hex");
}
