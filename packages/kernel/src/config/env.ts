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
 * Replaces variable references in every string value (never in keys). A value that is one reference as a
 * whole and resolves to a YAML number or boolean becomes that type, so `port: ${PORT:-8080}` is a number.
 */
export function substituteVariables(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  missing: MissingVariable[],
  path: Array<string | number> = [],
): unknown {
  if (typeof value === "string") return substituteString(value, env, missing, path);
  if (Array.isArray(value)) return value.map((item, i) => substituteVariables(item, env, missing, [...path, i]));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteVariables(v, env, missing, [...path, k]);
    return out;
  }
  return value;
}

function substituteString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  missing: MissingVariable[],
  path: Array<string | number>,
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
    const typed: unknown = safeScalar(replaced);
    if (typeof typed === "number" || typeof typed === "boolean") return typed;
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
