import { parse as parseYamlScalar } from "yaml";

/** A `${NAME}` or `$NAME` reference whose variable is unset and has no `:-default`. */
export interface MissingVariable {
  path: Array<string | number>;
  variable: string;
}

// ${NAME}, ${NAME:-default} or $NAME. `$$` is a literal dollar sign.
const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
const WHOLE_REFERENCE = /^(?:\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}|\$[A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * A value that was one whole reference and was typed (number or boolean) by substitution, keyed by
 * `typedKey(path)`, with the text it came from: validation puts the text back where a schema wants a string,
 * so an all-digit API key stays a string.
 */
export type TypedSubstitutions = Map<string, string>;

export function typedKey(path: ReadonlyArray<string | number>): string {
  return JSON.stringify(path.map(String));
}

/**
 * Replaces variable references in every string value (never in keys). A value that is one reference as a
 * whole and resolves to a YAML number or boolean becomes that type, so `port: ${PORT:-8080}` is a number;
 * `typed` collects those conversions so that a string-typed field can take its text back.
 */
export function substituteVariables(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  missing: MissingVariable[],
  path: Array<string | number> = [],
  typed?: TypedSubstitutions,
): unknown {
  if (typeof value === "string") return substituteString(value, env, missing, path, typed);
  if (Array.isArray(value)) return value.map((item, i) => substituteVariables(item, env, missing, [...path, i], typed));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteVariables(v, env, missing, [...path, k], typed);
    return out;
  }
  return value;
}

function substituteString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  missing: MissingVariable[],
  path: Array<string | number>,
  typed: TypedSubstitutions | undefined,
): unknown {
  if (!text.includes("$")) return text;
  const replaced = text.replace(REFERENCE, (match, braced?: string, fallback?: string, bare?: string) => {
    if (match === "$$") return "$";
    const name = (braced ?? bare) as string;
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    if (found === "") return "";
    missing.push({ path, variable: name });
    return match;
  });
  if (WHOLE_REFERENCE.test(text)) {
    const scalar: unknown = safeScalar(replaced);
    if (typeof scalar === "number" || typeof scalar === "boolean") {
      typed?.set(typedKey(path), replaced);
      return scalar;
    }
  }
  return replaced;
}

function safeScalar(text: string): unknown {
  try {
    return parseYamlScalar(text);
  } catch {
    return text;
  }
}
