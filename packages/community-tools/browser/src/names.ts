/** The browser tools, by name (the light plugin entry declares them without building them). */
export const BROWSER_TOOL_NAMES = [
  "browser_navigate",
  "browser_snapshot",
  "browser_click",
  "browser_type",
  "browser_get_text",
  "browser_back",
  "browser_screenshot",
  "browser_close",
] as const;

/** The read-only page capture tool (group `web`): a fresh context per call, no interaction. */
export const WEB_CAPTURE_TOOL_NAME = "web_capture";
/** Tool group of `web_capture`: it only reads, like the fetch tools. */
export const WEB_CAPTURE_TOOL_GROUP = "web";
