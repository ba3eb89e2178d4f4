import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { AntlerError, ErrorCodes } from "../errors.js";
import { type MissingVariable, substituteVariables, type TypedSubstitutions, typedKey } from "./env.js";
import { type ConfigIssue, type ConfigSource, formatIssue, formatPath, locate, type PathSegment, toConfigIssues } from "./issues.js";
import { type KernelConfig, kernelConfigSchema } from "./schema.js";

export { discoverConfigPath } from "./discover.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** A config file read and parsed, with variables substituted, not yet validated. */
export interface ConfigDocument {
  /** Absolute path of the file, or null for a config given in code (or none at all). */
  readonly path: string | null;
  /** Folder that relative paths in the config are resolved against. */
  readonly dir: string;
  readonly source: ConfigSource;
  readonly data: Record<string, unknown>;
  /** Whole-reference values that substitution typed as numbers or booleans, with their text. */
  readonly typed?: TypedSubstitutions;
}

export function readConfigDocument(path: string, env: Env = process.env): ConfigDocument {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new AntlerError(ErrorCodes.CONFIG_NOT_FOUND, `cannot read config file ${path}`, { cause: err });
  }
  return parseConfigText(text, { file: resolve(path), env });
}

/** Parses config YAML; `substitute: false` leaves `${VAR}` text alone (files users or models write, e.g. agents). */
export function parseConfigText(
  text: string,
  options: { file?: string | null; env?: Env; dir?: string; substitute?: boolean } = {},
): ConfigDocument {
  const file = options.file ?? null;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      return `${[file ?? "config", pos?.line, pos?.col].filter(Boolean).join(":")} ${e.message.split("\n")[0]}`;
    });
    throw new AntlerError(ErrorCodes.CONFIG_PARSE, `config is not valid YAML:\n  ${lines.join("\n  ")}`, {
      where: file ?? undefined,
      hint: "Fix the YAML syntax at the position shown (indentation and unquoted ':' are the usual causes).",
      details: { errors: lines },
    });
  }
  const raw = doc.toJS() ?? {};
  const source: ConfigSource = { file, doc, lineCounter };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidConfig(
      [{ path: "(root)", segments: [], message: "the config must be a mapping of sections", ...locate(source, []) }],
      file,
    );
  }
  const missing: MissingVariable[] = [];
  const typed: TypedSubstitutions = new Map();
  const data = (options.substitute === false ? raw : substituteVariables(raw, options.env ?? process.env, missing, [], typed)) as Record<
    string,
    unknown
  >;
  if (missing.length > 0) {
    const issues = missing.map((m) => ({
      path: formatPath(m.path),
      segments: m.path,
      message: `environment variable ${m.variable} is not set and has no default`,
      ...locate(source, m.path),
    }));
    throw new AntlerError(ErrorCodes.CONFIG_ENV_MISSING, issueSummary(issues, file), {
      where: file ?? undefined,
      hint: `Set the variable, or give a default with \${NAME:-default}.`,
      details: { issues },
    });
  }
  return { path: file, dir: options.dir ?? (file ? dirname(file) : process.cwd()), source, data, typed };
}

function restoreTypedText(
  value: unknown,
  issues: readonly z.core.$ZodIssue[],
  typed: TypedSubstitutions,
  prefix: readonly PathSegment[],
): unknown {
  let out = value;
  for (const issue of issues) {
    if (issue.code !== "invalid_type" || issue.expected !== "string" || issue.path.length === 0) continue;
    const text = typed.get(typedKey([...prefix, ...issue.path].map((s) => (typeof s === "symbol" ? String(s) : s))));
    if (text === undefined) continue;
    out = withValueAt(out, issue.path as ReadonlyArray<string | number>, text);
  }
  return out;
}

/** A copy of `root` with `path` set to `next`; the copies are shallow, along the path only. */
function withValueAt(root: unknown, path: ReadonlyArray<string | number>, next: unknown): unknown {
  if (path.length === 0) return next;
  const [head, ...rest] = path;
  if (Array.isArray(root)) {
    const copy = [...root];
    copy[Number(head)] = withValueAt(root[Number(head)], rest, next);
    return copy;
  }
  if (root !== null && typeof root === "object") {
    const record = root as Record<string, unknown>;
    return { ...record, [String(head)]: withValueAt(record[String(head)], rest, next) };
  }
  return root;
}

/** A config given in code: validated the same way, located by path only. */
export function configDocumentFromObject(data: Record<string, unknown>, dir: string = process.cwd()): ConfigDocument {
  return { path: null, dir, source: { file: null, doc: null, lineCounter: null }, data };
}

export function validateSection<S extends z.ZodType>(
  schema: S,
  value: unknown,
  document: ConfigDocument,
  prefix: readonly PathSegment[],
): { ok: true; value: z.output<S> } | { ok: false; issues: ConfigIssue[] } {
  let result = schema.safeParse(value);
  if (!result.success && document.typed && document.typed.size > 0) {
    // `api_key: ${KEY}` with KEY=12345 was typed as a number; where the schema wants a string, the text goes back.
    const restored = restoreTypedText(value, result.error.issues, document.typed, prefix);
    if (restored !== value) {
      value = restored;
      result = schema.safeParse(value);
    }
  }
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issues: toConfigIssues(result.error.issues, schema, document.source, prefix, value) };
}

/**
 * The kernel's keys, and the top-level sections the loaded plugins own. Without `sections` (the first pass, before
 * plugins are known) keys the kernel does not know are left for the second pass, which rejects any nobody owns.
 */
export function validateKernelConfig(document: ConfigDocument, sections?: Readonly<Record<string, z.ZodType>>): KernelConfig {
  const schema = sections === undefined ? kernelConfigSchema.loose() : kernelConfigSchema.extend(sections);
  const result = validateSection(schema, document.data, document, []);
  if (!result.ok) throw invalidConfig(result.issues, document.path);
  return result.value as KernelConfig;
}

function issueSummary(issues: readonly ConfigIssue[], file: string | null): string {
  const lines = issues.map((i) => `  ${formatIssue(i, file)}`);
  return `config is invalid (${issues.length} problem${issues.length === 1 ? "" : "s"}):\n${lines.join("\n")}`;
}

export function invalidConfig(issues: readonly ConfigIssue[], file: string | null): AntlerError {
  return new AntlerError(ErrorCodes.CONFIG_INVALID, issueSummary(issues, file), {
    hint: "Run `antler config check` to see every problem with its line, and `antler config schema` for every allowed key.",
    details: { file, issues },
  });
}
