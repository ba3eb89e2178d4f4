/** One RFC 6902 operation, of the kinds `diffJsonPatch` writes. */
export type JsonPatchOperation =
  | { op: "add"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "replace"; path: string; value: unknown };

/** An RFC 6901 reference token: `~` is `~0`, `/` is `~1`. */
function pointerToken(key: string | number): string {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The RFC 6902 patch that turns `before` into `after` (both JSON values), appended to `out` with paths under
 * `path`. Objects are compared key by key and arrays index by index (items added or removed at the end), so a
 * todo whose status changed is one `replace` of that status, not the whole list. Any other change replaces the
 * value. Removals from an array run from its end, so each index is valid when its operation is applied.
 */
export function diffJsonPatch(before: unknown, after: unknown, path = "", out: JsonPatchOperation[] = []): JsonPatchOperation[] {
  if (Array.isArray(before) && Array.isArray(after)) {
    const common = Math.min(before.length, after.length);
    for (let i = 0; i < common; i += 1) diffJsonPatch(before[i], after[i], `${path}/${i}`, out);
    for (let i = before.length - 1; i >= after.length; i -= 1) out.push({ op: "remove", path: `${path}/${i}` });
    for (let i = before.length; i < after.length; i += 1) out.push({ op: "add", path: `${path}/${i}`, value: after[i] });
    return out;
  }
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      if (!(key in after)) out.push({ op: "remove", path: `${path}/${pointerToken(key)}` });
    }
    for (const [key, value] of Object.entries(after)) {
      const child = `${path}/${pointerToken(key)}`;
      if (key in before) diffJsonPatch(before[key], value, child, out);
      else out.push({ op: "add", path: child, value });
    }
    return out;
  }
  if (before !== after) out.push({ op: "replace", path, value: after });
  return out;
}
