// What the demo asks, shared by demo.mjs and scripts/record-cassette.mjs so the two can never drift apart.
export const PROMPT =
  "Write a short report on how to build a reliable agent harness, based on my research notes. Save it as Markdown and show it to me.";
export const REPORT = "agent-harness-report.md";
