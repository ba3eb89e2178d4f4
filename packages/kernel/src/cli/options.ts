import { parseArgs } from "node:util";
import { didYouMean } from "../config/suggest.js";
import type { CliCommand, CliOptionSpec } from "../plugin.js";

type Value = string | number | boolean | undefined;
type Declared = CliCommand<Record<string, CliOptionSpec>>;
export type ParsedCommandArgs = { options: Record<string, Value>; positionals: Record<string, string | undefined> };

/** Thrown for input the command's declaration does not allow; the CLI prints it with the usage and exits 2. */
export class CliUsageError extends Error {}

// The CLI's own options, accepted by every command: `--config` is taken before a plugin command runs, `-v` shows logs.
const GLOBAL = { verbose: { type: "boolean", short: "v" }, config: { type: "string", short: "c" } } as const;

const flag = (name: string, spec: CliOptionSpec) =>
  `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.type === "boolean" ? "" : ` <${spec.placeholder ?? (spec.choices ? spec.choices.join("|") : "value")}>`}`;

/** A declared command's usage line and option list, for `--help`. */
export function declaredUsage(command: Pick<Declared, "name" | "usage" | "options" | "positionals">): string {
  const options = Object.entries(command.options ?? {});
  const words = (command.positionals ?? []).map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`));
  const usage =
    command.usage ??
    ["antler", command.name, ...words, ...options.map(([n, s]) => (s.required ? flag(n, s) : `[${flag(n, s)}]`))].join(" ");
  const lines = [`Usage: ${usage}`];
  if (!command.options && !command.positionals) return lines[0] as string;
  const row = (left: string, text = "") => `  ${left.padEnd(28)} ${text}`.trimEnd();
  if (words.length) lines.push("", "Arguments:", ...(command.positionals ?? []).map((p) => row(p.name, p.description)));
  lines.push("", "Options:");
  for (const [name, spec] of options) {
    const notes = [spec.required ? "required" : "", spec.default !== undefined ? `default: ${spec.default}` : ""].filter(Boolean);
    lines.push(row(flag(name, spec), [spec.description, notes.length ? `(${notes.join("; ")})` : ""].filter(Boolean).join(" ")));
  }
  lines.push(row("-c, --config <path>", "config.yaml to use"), row("-v, --verbose", "show the plugins' info logs on stderr"));
  return lines.join("\n");
}

/** Checks `args` against a command's declared options and positionals; throws CliUsageError with what is allowed. */
export function parseDeclaredArgs(command: Pick<Declared, "options" | "positionals">, args: string[]): ParsedCommandArgs {
  const declared = Object.entries(command.options ?? {});
  const parsers = Object.fromEntries(
    declared.map(([name, s]) => [name, { type: s.type === "boolean" ? "boolean" : "string", ...(s.short ? { short: s.short } : {}) }]),
  ) as Record<string, { type: "boolean" | "string"; short?: string }>;
  const named = (n: string, s: CliOptionSpec) => `${flag(n, { ...s, short: undefined })}${s.short ? ` (-${s.short})` : ""}`;
  const allowed = () => [...declared.map(([n, s]) => named(n, s)), "--config <path> (-c)", "--verbose (-v)"].join(", ");
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options: { ...GLOBAL, ...parsers }, allowPositionals: true, strict: true });
  } catch (err) {
    const unknown = /Unknown option '(-{1,2})([^']+)'/.exec((err as Error).message);
    if (!unknown) throw new CliUsageError((err as Error).message.split("\n")[0]);
    const hint = didYouMean(unknown[2] as string, Object.keys(parsers));
    throw new CliUsageError(`unknown option ${unknown[1]}${unknown[2]}${hint ? ` (did you mean --${hint}?)` : ""}. Allowed: ${allowed()}`);
  }
  const options: Record<string, Value> = {};
  for (const [name, spec] of declared) options[name] = optionValue(name, spec, parsed.values[name]);
  const words = command.positionals ?? [];
  if (parsed.positionals.length > words.length) {
    const extra = parsed.positionals[words.length];
    throw new CliUsageError(
      `unexpected argument "${extra}": takes ${words.length ? words.map((p) => `<${p.name}>`).join(" ") : "no arguments"}`,
    );
  }
  const positionals: Record<string, string | undefined> = {};
  for (const [i, p] of words.entries()) {
    if (p.required && parsed.positionals[i] === undefined)
      throw new CliUsageError(`missing <${p.name}>${p.description ? `: ${p.description}` : ""}`);
    positionals[p.name] = parsed.positionals[i];
  }
  return { options, positionals };
}

function optionValue(name: string, spec: CliOptionSpec, raw: unknown): Value {
  if (raw === undefined) {
    if (spec.required) throw new CliUsageError(`--${name} is required${spec.choices ? ` (one of: ${spec.choices.join(", ")})` : ""}`);
    return spec.default;
  }
  if (spec.type === "boolean") return raw as boolean;
  const text = String(raw);
  if (spec.type === "integer" || spec.type === "number") {
    const n = Number(text);
    const ok = text.trim() !== "" && Number.isFinite(n) && (spec.type === "number" || Number.isInteger(n));
    if (!ok) throw new CliUsageError(`--${name} must be ${spec.type === "integer" ? "an integer" : "a number"}, got "${text}"`);
    return n;
  }
  if (spec.choices && !spec.choices.includes(text)) {
    throw new CliUsageError(`--${name} must be one of ${spec.choices.join(", ")}; got "${text}"`);
  }
  return text;
}

/** A declaration the CLI could not honour, found when the plugin adds the command rather than when a user runs it. */
export function declarationProblem(command: Pick<Declared, "options">): string | undefined {
  for (const [name, spec] of Object.entries(command.options ?? {})) {
    if (name in GLOBAL || name === "help") return `option --${name} is the CLI's own`;
    if (spec.short !== undefined && (!/^[A-Za-z]$/.test(spec.short) || "chv".includes(spec.short))) {
      return `option --${name}: short must be one letter other than c, h and v (got "${spec.short}")`;
    }
  }
  return undefined;
}
