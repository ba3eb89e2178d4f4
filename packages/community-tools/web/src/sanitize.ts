/**
 * Remote content (search snippets, fetched pages) is data, not instructions. A page can carry text shaped like
 * the framework's own markup (`<system>`, `</user-data>`, `<tool_call>`, chat-template tokens such as
 * `<|im_start|>`) hoping the model reads it as a turn boundary or a system instruction. These functions keep
 * the text readable but break that shape: the angle brackets of such tags become `&lt;` / `&gt;`.
 */

/**
 * Tag names the lead agent's prompts, middleware and common chat templates give meaning to. Matched
 * case-insensitively as whole names, opening or closing, with or without attributes.
 */
export const FRAMEWORK_TAG_NAMES: readonly string[] = [
  // roles and turns
  "system",
  "system-reminder",
  "system_reminder",
  "system_notice",
  "system-prompt",
  "system_prompt",
  "user",
  "user-data",
  "user_data",
  "user_query",
  "user-input",
  "assistant",
  "human",
  "ai",
  "developer",
  "instructions",
  "instruction",
  "im_start",
  "im_end",
  // tool traffic
  "tool",
  "tool_call",
  "tool_calls",
  "tool-call",
  "tool_use",
  "tool_result",
  "tool-result",
  "tool_response",
  "tool_output",
  "function_call",
  "function_calls",
  "function_results",
  "function_result",
  "invoke",
  "parameter",
  "result",
  // the lead agent's prompt sections (DeerFlow's and Antler's)
  "role",
  "soul",
  "thinking",
  "thinking_style",
  "think",
  "clarification_system",
  "skill_system",
  "available_skills",
  "skill_index",
  "subagent_system",
  "memory",
  "memory_tool_system",
  "working_directory",
  "working_style",
  "response_style",
  "citations",
  "critical_reminders",
  "self_update",
  "current_uploads",
  "uploaded_files",
  "previous_summary",
  "conversation",
  "todo_list",
  "context",
  "untrusted_content",
  "remote_content",
  "web_content",
  "start_of_turn",
  "end_of_turn",
];

const NAMES = new Set(FRAMEWORK_TAG_NAMES.map((n) => n.toLowerCase()));

// Invisible characters that let `<sys\u200btem>` slip past a tag match, and the Unicode "tag" block used to
// smuggle hidden ASCII instructions. Neither carries meaning a reader can see, so both are removed.
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF]|\uDB40[\uDC00-\uDC7F]/g;

// `<`, fullwidth `＜`, small `﹤`, then optional `/`, a name, then attributes up to `>` (or the fullwidth forms).
const TAG =
  /[<\uFF1C\uFE64]\s*(\/?)\s*([A-Za-z][A-Za-z0-9_:-]{0,40})((?:\s[^<>\uFF1C\uFF1E\uFE64\uFE65]{0,200})?)\s*(\/?)\s*[>\uFF1E\uFE65]/g;

// Chat-template special tokens: <|im_start|>, <|eot_id|>, <｜begin▁of▁sentence｜>, <|start_header_id|>, ...
const SPECIAL_TOKEN = /[<\uFF1C]\s*[|\uFF5C][^<>\n\uFF1C\uFF1E]{0,60}[|\uFF5C]\s*[>\uFF1E]/g;

// Llama/Mistral-style markers.
const BRACKET_MARKERS = /\[\s*\/?\s*INST\s*\]|<<\s*\/?\s*SYS\s*>>|\[\s*\/?\s*(?:SYSTEM|TOOL_CALLS|TOOL_RESULTS|AVAILABLE_TOOLS)\s*\]/gi;

function escapeAngles(text: string): string {
  return text.replace(/[<\uFF1C\uFE64]/g, "&lt;").replace(/[>\uFF1E\uFE65]/g, "&gt;");
}

/**
 * Neutralizes framework tags and chat-template tokens in remote text. Ordinary HTML-ish text such as `<b>` or
 * `a < b > c` is left alone; only the names in `FRAMEWORK_TAG_NAMES`, `|...|` special tokens and
 * `[INST]`/`<<SYS>>` markers are touched.
 */
export function neutralizeFrameworkTags(text: string): string {
  if (text === "") return text;
  let out = text.replace(INVISIBLE, "");
  out = out.replace(SPECIAL_TOKEN, (m) => escapeAngles(m).replace(/[|\uFF5C]/g, "¦"));
  out = out.replace(TAG, (match, _slash: string, name: string) => (NAMES.has(name.toLowerCase()) ? escapeAngles(match) : match));
  out = out.replace(BRACKET_MARKERS, (m) => m.replace(/\[/g, "(").replace(/\]/g, ")").replace(/<</g, "((").replace(/>>/g, "))"));
  return out;
}

/** Whether `text` still contains something `neutralizeFrameworkTags` would change. */
export function containsFrameworkTags(text: string): boolean {
  return neutralizeFrameworkTags(text) !== text;
}
