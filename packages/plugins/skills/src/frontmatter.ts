import { createRequire } from "node:module";

// yaml (tens of milliseconds to load) comes with the first SKILL.md read, not with the plugin entry that
// `antler config check` loads; `require` keeps parsing synchronous.
let yamlModule: typeof import("yaml") | undefined;
function yaml(): typeof import("yaml") {
  yamlModule ??= createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return yamlModule;
}

import { SkillErrorCodes, skillError } from "./errors.js";

/** Keys a SKILL.md frontmatter may have. Anything else is a located error with a suggestion. */
export const FRONTMATTER_KEYS = [
  "name",
  "description",
  "license",
  "allowed-tools",
  "required-secrets",
  "version",
  "author",
  "metadata",
] as const;

/** Slash words the chat surfaces keep for themselves: never skill names, never activations. */
export const RESERVED_SLASH_WORDS: ReadonlySet<string> = new Set(["new", "help", "status", "models", "memory"]);

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

export interface RequiredSecret {
  name: string;
  optional: boolean;
}

/** What SKILL.md's frontmatter declares, validated. */
export interface SkillManifest {
  name: string;
  description: string;
  license?: string | undefined;
  /** Exact tool names; undefined when the skill sets no policy. */
  allowedTools?: string[] | undefined;
  requiredSecrets?: RequiredSecret[] | undefined;
  version?: string | undefined;
  author?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface ParsedSkillFile {
  manifest: SkillManifest;
  /** The Markdown after the frontmatter. */
  body: string;
}

/** Why `name` cannot name a skill, or null when it can. */
export function skillNameProblem(name: string): string | null {
  if (typeof name !== "string" || name.length === 0) return "it is empty";
  if (name.length > MAX_NAME) return `it is longer than ${MAX_NAME} characters`;
  if (!NAME.test(name)) return "use lowercase letters, digits and single hyphens (e.g. report-writing)";
  if (RESERVED_SLASH_WORDS.has(name)) return `/${name} is a reserved slash command`;
  return null;
}

function closest(input: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(input.toLowerCase(), candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(input.length / 3)) ? best : undefined;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min(current + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length] as number;
}

/**
 * Parses SKILL.md: a `---` fenced YAML frontmatter, then the body. Every problem is an `ANTLER_ERR_SKILL_INVALID`
 * error whose `where` is `<file>:<line>` (lines of SKILL.md itself), with the fix in the hint.
 */
export function parseSkillFile(text: string, file: string): ParsedSkillFile {
  const fail = (message: string, line: number | undefined, hint: string) =>
    skillError(SkillErrorCodes.INVALID, message, { where: line === undefined ? file : `${file}:${line}`, hint });
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const open = /^---[ \t]*\r?\n/.exec(source);
  if (!open) {
    throw fail(
      "SKILL.md does not start with a YAML frontmatter block",
      1,
      'Begin the file with "---", the name and description keys, and "---".',
    );
  }
  const rest = source.slice(open[0].length);
  const close = /^---[ \t]*$/m.exec(rest);
  if (!close) throw fail("the frontmatter of SKILL.md is not closed", 1, 'End the frontmatter with a line holding only "---".');
  const yamlText = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  const { isMap, isScalar, LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  // Line 1 of the YAML is line 2 of the file.
  const lineAt = (offset: number | undefined) => (offset === undefined ? undefined : lines.linePos(offset).line + 1);
  const firstError = doc.errors[0];
  if (firstError) {
    throw fail(
      `the frontmatter is not valid YAML: ${firstError.message.split("\n")[0]}`,
      lineAt(firstError.pos[0]),
      "Fix the YAML syntax.",
    );
  }
  if (!isMap(doc.contents)) throw fail("the frontmatter must be a mapping of keys", 2, "Write `name: ...` and `description: ...` lines.");
  const data: Record<string, unknown> = {};
  const lineOf = new Map<string, number | undefined>();
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const line = lineAt(isScalar(pair.key) ? pair.key.range?.[0] : undefined);
    if (!(FRONTMATTER_KEYS as readonly string[]).includes(key)) {
      const suggestion = closest(key, FRONTMATTER_KEYS);
      throw fail(
        `unknown frontmatter key "${key}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}`,
        line,
        `Allowed keys: ${FRONTMATTER_KEYS.join(", ")}.`,
      );
    }
    lineOf.set(key, line);
    data[key] = (pair.value as { toJSON?: () => unknown } | null)?.toJSON?.() ?? (isScalar(pair.value) ? pair.value.value : pair.value);
  }
  const text_ = (key: string, required: boolean, max?: number): string | undefined => {
    const value = data[key];
    if (value === undefined || value === null) {
      if (required) throw fail(`the frontmatter has no "${key}"`, 2, `Add a "${key}:" line to the frontmatter.`);
      return undefined;
    }
    if (typeof value !== "string" && typeof value !== "number") {
      throw fail(`"${key}" must be a string`, lineOf.get(key), `Write ${key} as plain text.`);
    }
    const s = String(value).trim();
    if (required && s === "") throw fail(`"${key}" is empty`, lineOf.get(key), `Give the skill a ${key}.`);
    if (max !== undefined && s.length > max) throw fail(`"${key}" is longer than ${max} characters`, lineOf.get(key), "Shorten it.");
    return s;
  };
  const name = text_("name", true) as string;
  const nameProblem = skillNameProblem(name);
  if (nameProblem)
    throw fail(`"name" ${JSON.stringify(name)} is not a valid skill name: ${nameProblem}`, lineOf.get("name"), "Rename the skill.");
  const manifest: SkillManifest = { name, description: text_("description", true, MAX_DESCRIPTION) as string };
  const license = text_("license", false);
  if (license !== undefined) manifest.license = license;
  const version = text_("version", false);
  if (version !== undefined) manifest.version = version;
  const author = text_("author", false);
  if (author !== undefined) manifest.author = author;
  if (data["allowed-tools"] !== undefined && data["allowed-tools"] !== null) {
    manifest.allowedTools = parseAllowedTools(data["allowed-tools"], (message, hint) => fail(message, lineOf.get("allowed-tools"), hint));
  }
  if (data["required-secrets"] !== undefined && data["required-secrets"] !== null) {
    manifest.requiredSecrets = parseSecrets(data["required-secrets"], (message, hint) =>
      fail(message, lineOf.get("required-secrets"), hint),
    );
  }
  if (data.metadata !== undefined && data.metadata !== null) {
    if (typeof data.metadata !== "object" || Array.isArray(data.metadata)) {
      throw fail('"metadata" must be a mapping', lineOf.get("metadata"), "Write metadata as `key: value` lines indented under it.");
    }
    manifest.metadata = data.metadata as Record<string, unknown>;
  }
  return { manifest, body };
}

/** `allowed-tools`: a YAML list, or one string of names separated by commas or spaces. Exact names only. */
function parseAllowedTools(value: unknown, fail: (message: string, hint: string) => Error): string[] {
  const raw = Array.isArray(value) ? value : typeof value === "string" ? value.split(/[\s,]+/) : null;
  if (raw === null) throw fail('"allowed-tools" must be a list of tool names', "Write `allowed-tools: [web_search, write_file]`.");
  const names: string[] = [];
  for (const item of raw) {
    if (typeof item !== "string") throw fail('"allowed-tools" entries must be tool names', "Write each tool name as plain text.");
    const name = item.trim();
    if (name === "") continue;
    if (!TOOL_NAME.test(name)) {
      throw fail(
        `"allowed-tools" entry ${JSON.stringify(name)} is not a tool name`,
        "Name each tool exactly (wildcards are not supported: MCP and durable tools must be listed by their full name).",
      );
    }
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

function parseSecrets(value: unknown, fail: (message: string, hint: string) => Error): RequiredSecret[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) => {
    if (typeof item === "string" && item.trim() !== "") return { name: item.trim(), optional: false };
    if (item && typeof item === "object" && typeof (item as { name?: unknown }).name === "string") {
      const optional = (item as { optional?: unknown }).optional;
      return { name: (item as { name: string }).name, optional: optional === true };
    }
    throw fail('"required-secrets" entries must be names or { name, optional }', "Write `required-secrets: [MY_API_KEY]`.");
  });
}
