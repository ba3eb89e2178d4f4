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

/**
 * Checks a form's values against its fields; returns one message per field that is wrong, keyed by field name
 * (empty: the form may be sent). Required means non-blank text, a chosen option, at least one of several; a
 * checkbox is always an answer (unchecked is "no"). Numbers must be finite decimals, dates real YYYY-MM-DD days,
 * choices one of the offered options.
 */
export function validateFormValues(fields: readonly FormField[], values: FormValues): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const value = values[field.name];
    const label = labelOf(field);
    if (field.type === "checkbox") {
      if (value !== undefined && typeof value !== "boolean") errors[field.name] = `${label} must be yes or no`;
      continue;
    }
    if (field.type === "multi_select") {
      const picked = Array.isArray(value) ? value : [];
      if (value !== undefined && !Array.isArray(value)) errors[field.name] = `${label} must be a list of choices`;
      else if (field.required && picked.length === 0) errors[field.name] = `Choose at least one option for ${label}`;
      else if (picked.some((p) => !(field.options ?? []).includes(p))) errors[field.name] = `${label} has a choice that is not offered`;
      continue;
    }
    if (value !== undefined && typeof value !== "string") {
      errors[field.name] = `${label} must be text`;
      continue;
    }
    const text = (value ?? "").trim();
    if (text === "") {
      if (field.required) errors[field.name] = field.type === "select" ? `Choose an option for ${label}` : `${label} is required`;
      continue;
    }
    if (field.type === "number" && (!NUMBER.test(text) || !Number.isFinite(Number(text)))) errors[field.name] = `${label} must be a number`;
    else if (field.type === "date" && !isRealDate(text)) errors[field.name] = `${label} must be a date as YYYY-MM-DD`;
    else if (field.type === "select" && !(field.options ?? []).includes(text)) errors[field.name] = `${label} must be one of the options`;
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
