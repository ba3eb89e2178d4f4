import type { AntlerTool } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";

export const ASK_CLARIFICATION_TOOL_NAME = "ask_clarification";

export const CLARIFICATION_TYPES = ["missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"] as const;
export type ClarificationType = (typeof CLARIFICATION_TYPES)[number];

export const HUMAN_INPUT_FIELD_TYPES = ["text", "textarea", "number", "select", "multi_select", "checkbox", "date"] as const;
export type HumanInputFieldType = (typeof HUMAN_INPUT_FIELD_TYPES)[number];

/** Bounds of one request, so a runaway model cannot make the UI render a wall of inputs. */
export const CLARIFICATION_LIMITS = Object.freeze({
  maxFields: 16,
  maxOptions: 24,
  /** UTF-8 bytes of the serialized `human_input` object. */
  maxBytes: 16 * 1024,
  maxOptionLength: 256,
  maxLabelLength: 256,
  maxQuestionLength: 2000,
  maxContextLength: 4000,
  /** Entries kept in `dropped`; the rest are summarized in one last entry. */
  maxDroppedEntries: 24,
});

export interface HumanInputField {
  /** Key of the value in the submitted form; letters, digits, `_` and `-`. */
  name: string;
  label?: string;
  type: HumanInputFieldType;
  required?: boolean;
  /** Present exactly for `select` and `multi_select`. */
  options?: string[];
  placeholder?: string;
}

/** Something the normalizer removed or replaced: where (`fields[2].type`, `options`) and why. */
export interface DroppedInput {
  path: string;
  reason: string;
}

/**
 * What the UI renders as a Human Input Card. v1 is free text or a single choice among `options`; v2 is a form
 * of `fields`. Replies always come back as plain text (a form submits a readable summary).
 */
export interface HumanInputRequest {
  version: 1 | 2;
  kind: "free_text" | "choice" | "form";
  question: string;
  clarification_type: ClarificationType;
  context?: string;
  options?: string[];
  fields?: HumanInputField[];
  dropped?: DroppedInput[];
}

export type ClarificationNormalization =
  | { ok: true; request: HumanInputRequest; text: string }
  | { ok: false; error: string; dropped: DroppedInput[] };

const fieldSchema = z.object({
  name: z.string().describe("Key of this value in the reply: letters, digits, _ and -, starting with a letter; unique within the form."),
  label: z.string().optional().describe("What the user sees next to the input. Defaults to the name."),
  type: z
    .enum(HUMAN_INPUT_FIELD_TYPES)
    .optional()
    .describe(
      "Input kind: text (one line, default), textarea (several lines), number, select (pick one of options), multi_select (pick any of options), checkbox (yes/no), date (YYYY-MM-DD).",
    ),
  required: z.boolean().optional().describe("Whether the user must fill this in. Default false."),
  options: z
    .array(z.string())
    .optional()
    .describe(`The choices; required for select and multi_select, ignored otherwise. At most ${CLARIFICATION_LIMITS.maxOptions}.`),
  placeholder: z.string().optional().describe("Example or hint shown inside an empty input."),
});

export const askClarificationSchema = z.object({
  question: z.string().describe("The question to ask, addressed to the user, in one or two sentences."),
  clarification_type: z
    .enum(CLARIFICATION_TYPES)
    .describe(
      "Why you are asking: missing_info (a required detail is absent), ambiguous_requirement (the request can be read several ways), approach_choice (several valid approaches, the user should pick), risk_confirmation (about to do something destructive or costly), suggestion (you propose something and want a yes/no).",
    ),
  context: z.string().optional().describe("Why you need the answer, or what you found so far; shown above the question."),
  options: z
    .array(z.string())
    .optional()
    .describe(
      `For a single-choice question: the choices, short and distinct, at most ${CLARIFICATION_LIMITS.maxOptions}. The user picks one or writes their own answer.`,
    ),
  fields: z
    .array(fieldSchema)
    .optional()
    .describe(
      `To collect several values at once: a form of at most ${CLARIFICATION_LIMITS.maxFields} fields. Use it instead of options when you need more than one answer, or when the user may pick several options (one multi_select field).`,
    ),
});

export type AskClarificationArgs = z.input<typeof askClarificationSchema>;

const DESCRIPTION = [
  "Ask the user a question and stop until they answer. Your turn ends right after this call; the answer arrives as the user's next message.",
  "Use it when you cannot proceed well without the user: required information is missing, the request is ambiguous, there are several reasonable approaches, or an action is risky or irreversible.",
  "Do not use it for things you can find out yourself with your tools, and ask everything you need in one call.",
  "Free text: give only question. Single choice: add options. Several values, or a pick-several question: add fields (a small form).",
].join("\n");

// Names become object keys in the UI and in form submissions; prototype-ish names are refused outright.
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const RESERVED_NAMES = new Set(["__proto__", "constructor", "prototype", "hasOwnProperty", "toString", "valueOf"]);
const FIELD_TYPES = new Set<string>(HUMAN_INPUT_FIELD_TYPES);
const TYPES_WITH_OPTIONS = new Set<HumanInputFieldType>(["select", "multi_select"]);
const CLARIFICATION_TYPE_SET = new Set<string>(CLARIFICATION_TYPES);

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const collapse = (text: string) => text.replace(/\s+/g, " ").trim();
const byteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

/** Trimmed, whitespace-collapsed, non-empty, de-duplicated strings (numbers accepted as text), capped. */
function normalizeOptions(raw: unknown, path: string, dropped: DroppedInput[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    dropped.push({ path, reason: "not a list of strings" });
    return [];
  }
  const out: string[] = [];
  const seen = new Set<string>();
  let overflow = 0;
  for (const [i, item] of raw.entries()) {
    const text = typeof item === "string" ? collapse(item) : typeof item === "number" && Number.isFinite(item) ? String(item) : undefined;
    let problem: string | undefined;
    if (text === undefined) problem = "not a string";
    else if (text === "") problem = "empty";
    else if (text.length > CLARIFICATION_LIMITS.maxOptionLength) problem = `longer than ${CLARIFICATION_LIMITS.maxOptionLength} characters`;
    else if (seen.has(text)) problem = "duplicate";
    if (problem !== undefined || text === undefined) {
      dropped.push({ path: `${path}[${i}]`, reason: problem ?? "not a string" });
    } else if (out.length >= CLARIFICATION_LIMITS.maxOptions) {
      overflow++;
    } else {
      seen.add(text);
      out.push(text);
    }
  }
  if (overflow > 0)
    dropped.push({ path, reason: `${overflow} option(s) over the limit of ${CLARIFICATION_LIMITS.maxOptions} were dropped` });
  return out;
}

function optionalText(raw: unknown, path: string, max: number, dropped: DroppedInput[]): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "string") {
    dropped.push({ path, reason: "not a string" });
    return undefined;
  }
  const text = collapse(raw);
  if (text.length > max) {
    dropped.push({ path, reason: `truncated to ${max} characters` });
    return `${text.slice(0, max - 1)}…`;
  }
  return text === "" ? undefined : text;
}

function normalizeField(raw: unknown, index: number, names: Set<string>, dropped: DroppedInput[]): HumanInputField | undefined {
  const path = `fields[${index}]`;
  if (!isRecord(raw)) {
    dropped.push({ path, reason: "not an object" });
    return undefined;
  }
  const name = typeof raw.name === "string" ? raw.name.trim() : undefined;
  if (!name) {
    dropped.push({ path, reason: "missing name" });
    return undefined;
  }
  if (!FIELD_NAME.test(name) || RESERVED_NAMES.has(name)) {
    dropped.push({ path, reason: `unsafe name ${JSON.stringify(name)}: use letters, digits, _ and -, starting with a letter` });
    return undefined;
  }
  if (names.has(name)) {
    dropped.push({ path, reason: `duplicate name ${JSON.stringify(name)}` });
    return undefined;
  }

  let type: HumanInputFieldType = "text";
  if (typeof raw.type === "string" && FIELD_TYPES.has(raw.type)) {
    type = raw.type as HumanInputFieldType;
  } else if (raw.type !== undefined && raw.type !== null) {
    dropped.push({ path: `${path}.type`, reason: `unknown type ${JSON.stringify(raw.type)}; treated as text` });
  }

  const field: HumanInputField = { name, type };
  const label = optionalText(raw.label, `${path}.label`, CLARIFICATION_LIMITS.maxLabelLength, dropped);
  if (label !== undefined) field.label = label;
  if (TYPES_WITH_OPTIONS.has(type)) {
    const options = normalizeOptions(raw.options, `${path}.options`, dropped);
    if (options.length === 0) {
      dropped.push({ path, reason: `${type} field ${JSON.stringify(name)} has no usable options` });
      return undefined;
    }
    field.options = options;
  } else if (raw.options !== undefined && raw.options !== null) {
    dropped.push({ path: `${path}.options`, reason: `options only apply to select and multi_select, not ${type}` });
  }
  if (typeof raw.required === "boolean") field.required = raw.required;
  else if (raw.required !== undefined && raw.required !== null) dropped.push({ path: `${path}.required`, reason: "not true or false" });
  const placeholder = optionalText(raw.placeholder, `${path}.placeholder`, CLARIFICATION_LIMITS.maxLabelLength, dropped);
  if (placeholder !== undefined) field.placeholder = placeholder;

  names.add(name);
  return field;
}

function capDropped(dropped: DroppedInput[]): DroppedInput[] {
  const max = CLARIFICATION_LIMITS.maxDroppedEntries;
  if (dropped.length <= max) return dropped;
  return [...dropped.slice(0, max - 1), { path: "dropped", reason: `${dropped.length - (max - 1)} more entries not listed` }];
}

/**
 * Validates and normalizes an `ask_clarification` call, whatever the model sent. Invalid fields and options are
 * dropped (and listed in `dropped`), unknown field types become `text`, and the caps are enforced: at most 16
 * fields, 24 options per field or question, and 16 KB for the serialized request (trailing fields go first).
 * Only a missing question is fatal, since there is nothing to ask.
 */
export function normalizeClarificationRequest(args: unknown): ClarificationNormalization {
  const dropped: DroppedInput[] = [];
  const input = isRecord(args) ? args : {};
  if (!isRecord(args)) dropped.push({ path: "(arguments)", reason: "not an object" });

  let question = typeof input.question === "string" ? input.question.trim() : "";
  if (question.length > CLARIFICATION_LIMITS.maxQuestionLength) {
    question = `${question.slice(0, CLARIFICATION_LIMITS.maxQuestionLength - 1)}…`;
    dropped.push({ path: "question", reason: `truncated to ${CLARIFICATION_LIMITS.maxQuestionLength} characters` });
  }
  if (question === "") {
    return {
      ok: false,
      dropped,
      error: `${ASK_CLARIFICATION_TOOL_NAME} needs a non-empty "question" (the text the user will answer). Call it again with the question to ask.`,
    };
  }

  let clarificationType: ClarificationType = "missing_info";
  if (typeof input.clarification_type === "string" && CLARIFICATION_TYPE_SET.has(input.clarification_type)) {
    clarificationType = input.clarification_type as ClarificationType;
  } else {
    dropped.push({
      path: "clarification_type",
      reason: `${JSON.stringify(input.clarification_type ?? null)} is not a known type; using missing_info`,
    });
  }

  let context = typeof input.context === "string" && input.context.trim() !== "" ? input.context.trim() : undefined;
  if (input.context !== undefined && input.context !== null && typeof input.context !== "string")
    dropped.push({ path: "context", reason: "not a string" });
  if (context !== undefined && context.length > CLARIFICATION_LIMITS.maxContextLength) {
    context = `${context.slice(0, CLARIFICATION_LIMITS.maxContextLength - 1)}…`;
    dropped.push({ path: "context", reason: `truncated to ${CLARIFICATION_LIMITS.maxContextLength} characters` });
  }

  const fields: HumanInputField[] = [];
  if (input.fields !== undefined && input.fields !== null) {
    if (!Array.isArray(input.fields)) {
      dropped.push({ path: "fields", reason: "not a list" });
    } else {
      const names = new Set<string>();
      let overflow = 0;
      input.fields.forEach((raw, i) => {
        const field = normalizeField(raw, i, names, dropped);
        if (!field) return;
        if (fields.length >= CLARIFICATION_LIMITS.maxFields) overflow++;
        else fields.push(field);
      });
      if (overflow > 0)
        dropped.push({ path: "fields", reason: `${overflow} field(s) over the limit of ${CLARIFICATION_LIMITS.maxFields} were dropped` });
    }
  }

  let options = normalizeOptions(input.options, "options", dropped);
  if (fields.length > 0 && options.length > 0) {
    // A form card has no place for top-level choices; the model should have used a select field.
    dropped.push({ path: "options", reason: "ignored because fields were given; put choices in a select field" });
    options = [];
  }

  const assemble = (): HumanInputRequest => {
    const kind = fields.length > 0 ? "form" : options.length > 0 ? "choice" : "free_text";
    const request: HumanInputRequest = { version: kind === "form" ? 2 : 1, kind, question, clarification_type: clarificationType };
    if (context !== undefined) request.context = context;
    if (kind === "choice") request.options = [...options];
    if (kind === "form") request.fields = fields.map((f) => ({ ...f }));
    if (dropped.length > 0) request.dropped = capDropped(dropped);
    return request;
  };

  // Shed the least important parts first: trailing fields, trailing options, then long context and question.
  let request = assemble();
  const over = () => byteLength(request) > CLARIFICATION_LIMITS.maxBytes;
  const sizeReason = `request over ${CLARIFICATION_LIMITS.maxBytes} bytes`;
  while (over() && fields.length > 0) {
    const field = fields.pop() as HumanInputField;
    dropped.push({ path: `fields[${fields.length}]`, reason: `${sizeReason}; field ${JSON.stringify(field.name)} dropped` });
    request = assemble();
  }
  while (over() && options.length > 0) {
    options.pop();
    dropped.push({ path: `options[${options.length}]`, reason: sizeReason });
    request = assemble();
  }
  if (over() && context !== undefined) {
    context = undefined;
    dropped.push({ path: "context", reason: sizeReason });
    request = assemble();
  }
  if (over()) {
    question = `${question.slice(0, 500)}…`;
    dropped.push({ path: "question", reason: `${sizeReason}; truncated` });
    request = assemble();
  }

  return { ok: true, request, text: renderClarificationText(request) };
}

function describeField(field: HumanInputField, index: number): string {
  const head = `${index + 1}. ${field.label ?? field.name}${field.label ? ` [${field.name}]` : ""}`;
  const requirement = field.required ? ", required" : ", optional";
  switch (field.type) {
    case "select":
      return `${head} (choose one${requirement}): ${(field.options ?? []).join(" | ")}`;
    case "multi_select":
      return `${head} (choose any${requirement}): ${(field.options ?? []).join(" | ")}`;
    case "checkbox":
      return `${head} (yes/no${requirement})`;
    case "date":
      return `${head} (date, YYYY-MM-DD${requirement})`;
    case "textarea":
      return `${head} (text, may span several lines${requirement})`;
    default:
      return `${head} (${field.type}${requirement})${field.placeholder ? ` e.g. ${field.placeholder}` : ""}`;
  }
}

/** The readable fallback: what a text-only client shows, and what stays in the conversation history. */
export function renderClarificationText(request: HumanInputRequest): string {
  const parts: string[] = [request.question];
  if (request.context) parts.push(request.context);
  if (request.kind === "choice" && request.options) {
    parts.push(request.options.map((o, i) => `${i + 1}. ${o}`).join("\n"));
    parts.push("Reply with the number or text of your choice, or describe something else.");
  } else if (request.kind === "form" && request.fields) {
    parts.push(`Please provide:\n${request.fields.map(describeField).join("\n")}`);
    parts.push('Reply with one line per item, as "name: value".');
  }
  return parts.join("\n\n");
}

/**
 * The message that answers an `ask_clarification` call: the text fallback as content and the normalized request
 * as `artifact.human_input`. Invalid input without a question yields an error message, so the model can retry.
 */
export function clarificationMessage(args: unknown, toolCallId: string): ToolMessage {
  const result = normalizeClarificationRequest(args);
  if (!result.ok) {
    return new ToolMessage({ content: result.error, name: ASK_CLARIFICATION_TOOL_NAME, tool_call_id: toolCallId, status: "error" });
  }
  return new ToolMessage({
    content: result.text,
    name: ASK_CLARIFICATION_TOOL_NAME,
    tool_call_id: toolCallId,
    status: "success",
    artifact: { human_input: result.request },
  });
}

/**
 * `ask_clarification`. The Clarification middleware answers the call before this tool runs (so even malformed
 * arguments get normalized) and ends the turn once it succeeded; the tool gives the same answer when it is used
 * without the middleware, but then nothing ends the turn for it.
 */
export function createAskClarificationTool(): AntlerTool {
  return defineTool({
    name: ASK_CLARIFICATION_TOOL_NAME,
    description: DESCRIPTION,
    schema: askClarificationSchema,
    run: (args, runtime: ToolRuntime) => clarificationMessage(args, runtime?.toolCallId ?? ""),
  });
}
