// The client side of `ask_clarification` v2 forms. Pure and dependency-free: the browser bundle imports this very
// file, so the page and the tests apply one set of rules. The field shapes are the ones the runtime's normalizer
// (`normalizeClarificationRequest` in @antler/plugin-runtime) guarantees: names match FIELD_NAME, select and
// multi_select always have options, and the reply goes back as "name: value" lines, as the card's text asks.

export type HumanInputFieldType = "text" | "textarea" | "number" | "select" | "multi_select" | "checkbox" | "date";

export interface FormField {
  name: string;
  label?: string;
  type: HumanInputFieldType;
  required?: boolean;
  options?: string[];
  placeholder?: string;
}

/** What an input holds: text for text-like fields, a list for multi_select, a boolean for checkbox. */
export type FormValue = string | string[] | boolean;
export type FormValues = Record<string, FormValue | undefined>;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function isRealDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const labelOf = (field: FormField) => field.label ?? field.name;

/** Why a form field's value was refused (one per field): the key of its message. */
export type FormProblem =
  | "not_yes_no"
  | "not_a_list"
  | "choose_some"
  | "choice_not_offered"
  | "not_text"
  | "choose_one"
  | "required"
  | "not_a_number"
  | "not_a_date"
  | "not_an_option";

/** The sentence for each problem, given the field's label (the console passes its reader's language). */
export type FormMessages = Readonly<Record<FormProblem, (label: string) => string>>;

const ENGLISH: FormMessages = {
  not_yes_no: (label) => `${label} must be yes or no`,
  not_a_list: (label) => `${label} must be a list of choices`,
  choose_some: (label) => `Choose at least one option for ${label}`,
  choice_not_offered: (label) => `${label} has a choice that is not offered`,
  not_text: (label) => `${label} must be text`,
  choose_one: (label) => `Choose an option for ${label}`,
  required: (label) => `${label} is required`,
  not_a_number: (label) => `${label} must be a number`,
  not_a_date: (label) => `${label} must be a date as YYYY-MM-DD`,
  not_an_option: (label) => `${label} must be one of the options`,
};

function problemOf(field: FormField, value: FormValues[string]): FormProblem | null {
  if (field.type === "checkbox") return value !== undefined && typeof value !== "boolean" ? "not_yes_no" : null;
  if (field.type === "multi_select") {
    const picked = Array.isArray(value) ? value : [];
    if (value !== undefined && !Array.isArray(value)) return "not_a_list";
    if (field.required && picked.length === 0) return "choose_some";
    return picked.some((p) => !(field.options ?? []).includes(p)) ? "choice_not_offered" : null;
  }
  if (value !== undefined && typeof value !== "string") return "not_text";
  const text = (value ?? "").trim();
  if (text === "") return field.required ? (field.type === "select" ? "choose_one" : "required") : null;
  if (field.type === "number" && (!NUMBER.test(text) || !Number.isFinite(Number(text)))) return "not_a_number";
  if (field.type === "date" && !isRealDate(text)) return "not_a_date";
  if (field.type === "select" && !(field.options ?? []).includes(text)) return "not_an_option";
  return null;
}

/**
 * Checks a form's values against its fields; returns one message per field that is wrong, keyed by field name
 * (empty: the form may be sent). Required means non-blank text, a chosen option, at least one of several; a
 * checkbox is always an answer (unchecked is "no"). Numbers must be finite decimals, dates real YYYY-MM-DD days,
 * choices one of the offered options. `messages` words them (English by default).
 */
export function validateFormValues(
  fields: readonly FormField[],
  values: FormValues,
  messages: FormMessages = ENGLISH,
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const problem = problemOf(field, values[field.name]);
    if (problem) errors[field.name] = messages[problem](labelOf(field));
  }
  return errors;
}

/**
 * The readable reply a form submits: one `name: value` line per field, in the form's order (the format the card's
 * text fallback asks for). Several lines of a textarea continue on indented lines; a blank optional field says so.
 */
export function formReplyText(fields: readonly FormField[], values: FormValues): string {
  return fields
    .map((field) => {
      const value = values[field.name];
      let text: string;
      if (field.type === "checkbox") text = value === true ? "yes" : "no";
      else if (Array.isArray(value)) text = value.length > 0 ? value.join(", ") : "(none)";
      else text = typeof value === "string" && value.trim() !== "" ? value.trim() : "(no answer)";
      return `${field.name}: ${text.replace(/\r?\n/g, "\n  ")}`;
    })
    .join("\n");
}
