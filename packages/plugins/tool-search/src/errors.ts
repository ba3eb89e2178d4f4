/**
 * Codes in the kernel's `ANTLER_ERR_*` shape. They reach the model inside error tool results (a bad query or a
 * call to a tool that was never loaded is the model's to fix, not a failed run), so the model and logs can tell them apart.
 */
export const ToolSearchErrorCodes = {
  /** A `tool_search` query that cannot run: empty, an invalid regular expression, a `+` without a prefix. */
  QUERY: "ANTLER_ERR_TOOL_SEARCH_QUERY",
  /** A call to a deferred tool whose schema was not loaded in this thread (or was loaded from an older catalog). */
  NOT_LOADED: "ANTLER_ERR_TOOL_SEARCH_NOT_LOADED",
} as const;

export type ToolSearchErrorCode = (typeof ToolSearchErrorCodes)[keyof typeof ToolSearchErrorCodes];
