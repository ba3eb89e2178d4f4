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
