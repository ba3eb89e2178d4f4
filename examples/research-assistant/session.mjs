// What the demo asks, shared by demo.mjs and scripts/record-cassette.mjs so the two can never drift apart.
// It starts with /report-writing: the skill's body joins the turn and its allowed-tools list is enforced.
export const PROMPT =
  "/report-writing Write a short report on how to build a reliable agent harness, based on my research notes. Save it as Markdown and show it to me.";
export const REPORT = "agent-harness-report.md";
/** The custom agent the demo talks to (agents/research-analyst, shipped with this distribution). */
export const AGENT = "research-analyst";
