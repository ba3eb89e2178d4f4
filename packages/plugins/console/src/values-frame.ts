/**
 * The top-level keys a gateway `values` frame says something about: all of them in a snapshot (a join or a
 * resume), only those that changed (`set`) in a patch. The page reads title, todos and artifacts from them;
 * messages come from `GET /state` and `messages-tuple` frames. Shared by the page and its tests.
 */
export function valuesFrameKeys(data: unknown): Record<string, unknown> {
  const frame = (data ?? {}) as { snapshot?: Record<string, unknown>; patch?: { set?: Record<string, unknown> } };
  return frame.snapshot ?? frame.patch?.set ?? {};
}
