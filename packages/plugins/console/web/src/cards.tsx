import { type FormEvent, type ReactNode, useId, useMemo, useState } from "react";
import {
  type FormField,
  type FormMessages,
  type FormProblem,
  type FormValues,
  formReplyText,
  validateFormValues,
} from "../../src/human-input";
import { type Translate, useT } from "./i18n";
import { closeOnEscape } from "./keyboard";
import { Markdown } from "./markdown";
import type { HumanInputRequest, Item } from "./transcript";

function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/**
 * JSON (an object or array), XML-like output and very long output (a whole file read back) read best as they
 * are; prose and Markdown are rendered.
 */
function looksLikeData(result: string): boolean {
  const t = result.trim();
  if (t.length > 50_000 || /^</.test(t)) return true;
  if (!/^[[{]/.test(t)) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

/** One tool call: name, outcome and duration in the summary; arguments and result (or error) when opened. */
export function ToolCard({ item, awaiting = false }: { item: Extract<Item, { kind: "tool" }>; awaiting?: boolean }): ReactNode {
  const t = useT();
  const state = item.status === undefined ? (awaiting ? "awaiting" : "running") : item.status;
  return (
    <details
      className={`tool tool-${state}`}
      data-tool={item.name}
      data-tool-call={item.key}
      onKeyDown={(e) => {
        const card = e.currentTarget;
        if (!card.open) return;
        closeOnEscape(() => {
          card.open = false;
          card.querySelector("summary")?.focus();
        })(e);
      }}
    >
      <summary>
        <span className="tool-name">{item.name}</span>
        <span className={`badge badge-${state}`}>{t(`tool.${state}`)}</span>
        {item.durationMs !== undefined ? <span className="duration">{formatMs(item.durationMs)}</span> : null}
      </summary>
      <div className="tool-body">
        <h4>{t("tool.arguments")}</h4>
        <pre className="code">{pretty(item.args)}</pre>
        {item.result !== undefined ? (
          <>
            <h4>{t(item.status === "error" ? "tool.errorTitle" : "tool.result")}</h4>
            {item.status !== "error" && !looksLikeData(item.result) ? (
              <div className="tool-result">
                <Markdown text={item.result} />
              </div>
            ) : (
              <pre className={item.status === "error" ? "code code-error" : "code"}>{item.result}</pre>
            )}
          </>
        ) : null}
      </div>
    </details>
  );
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function FieldInput({
  field,
  value,
  error,
  onChange,
  disabled,
}: {
  field: FormField;
  value: FormValues[string];
  error: string | undefined;
  onChange(v: FormValues[string]): void;
  disabled: boolean;
}): ReactNode {
  const t = useT();
  const id = useId();
  const label = `${field.label ?? field.name}${field.required ? " *" : ""}`;
  const described = error ? `${id}-err` : undefined;
  const common = { id, disabled, "aria-invalid": error ? true : undefined, "aria-describedby": described, name: field.name };
  let input: ReactNode;
  switch (field.type) {
    case "textarea":
      input = (
        <textarea
          {...common}
          rows={3}
          placeholder={field.placeholder}
          value={String(value ?? "")}
          onChange={(e) => onChange(e.target.value)}
        />
      );
      break;
    case "select":
      input = (
        <select {...common} value={String(value ?? "")} onChange={(e) => onChange(e.target.value)}>
          <option value="">{t("form.choose")}</option>
          {(field.options ?? []).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
      break;
    case "multi_select": {
      const picked = Array.isArray(value) ? value : [];
      return (
        <fieldset className="field" aria-describedby={described} data-field={field.name}>
          <legend>{label}</legend>
          {(field.options ?? []).map((o) => (
            <label key={o} className="check">
              <input
                type="checkbox"
                disabled={disabled}
                checked={picked.includes(o)}
                onChange={(e) => onChange(e.target.checked ? [...picked, o] : picked.filter((p) => p !== o))}
              />
              {o}
            </label>
          ))}
          {error ? (
            <p className="field-error" id={described}>
              {error}
            </p>
          ) : null}
        </fieldset>
      );
    }
    case "checkbox":
      return (
        <div className="field" data-field={field.name}>
          <label className="check">
            <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
            {label}
          </label>
        </div>
      );
    default:
      input = (
        <input
          {...common}
          type={field.type === "number" ? "text" : field.type === "date" ? "date" : "text"}
          inputMode={field.type === "number" ? "decimal" : undefined}
          placeholder={field.placeholder ?? (field.type === "date" ? "YYYY-MM-DD" : undefined)}
          value={String(value ?? "")}
          onChange={(e) => onChange(e.target.value)}
        />
      );
  }
  return (
    <div className="field" data-field={field.name}>
      <label htmlFor={id}>{label}</label>
      {input}
      {error ? (
        <p className="field-error" id={described}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

const FORM_PROBLEMS: readonly FormProblem[] = [
  "not_yes_no",
  "not_a_list",
  "choose_some",
  "choice_not_offered",
  "not_text",
  "choose_one",
  "required",
  "not_a_number",
  "not_a_date",
  "not_an_option",
];

/** The form checks' sentences in the reader's language. */
function formMessages(t: Translate): FormMessages {
  const messages = {} as Record<FormProblem, (label: string) => string>;
  for (const problem of FORM_PROBLEMS) messages[problem] = (label) => t(`form.${problem}`, { label });
  return messages;
}

/**
 * The Human Input Card of `ask_clarification`: free text, a choice among options (v1), or a form (v2) checked
 * with the same rules as `validateFormValues` before it is sent as the readable "name: value" reply.
 */
export function AskCard({
  request,
  pending,
  onReply,
}: {
  request: HumanInputRequest;
  pending: boolean;
  onReply(text: string): void;
}): ReactNode {
  const t = useT();
  const [text, setText] = useState("");
  const [values, setValues] = useState<FormValues>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const textId = useId();
  const disabled = !pending;
  const messages = useMemo(() => formMessages(t), [t]);
  const submitForm = (e: FormEvent) => {
    e.preventDefault();
    const fields = request.fields ?? [];
    const found = validateFormValues(fields, values, messages);
    setErrors(found);
    if (Object.keys(found).length === 0) onReply(formReplyText(fields, values));
  };
  return (
    <section className="ask" aria-label={t("ask.label")} data-kind={request.kind}>
      <p className="ask-kind">{request.clarification_type.replaceAll("_", " ")}</p>
      <p className="ask-question">{request.question}</p>
      {request.context ? <p className="ask-context">{request.context}</p> : null}
      {request.kind === "form" ? (
        <form onSubmit={submitForm} noValidate>
          {(request.fields ?? []).map((f) => (
            <FieldInput
              key={f.name}
              field={f}
              value={values[f.name]}
              error={errors[f.name]}
              disabled={disabled}
              onChange={(v) => {
                const next = { ...values, [f.name]: v };
                setValues(next);
                // Once the form was refused, each change re-checks it, so a fixed field loses its message at once.
                if (Object.keys(errors).length > 0) setErrors(validateFormValues(request.fields ?? [], next, messages));
              }}
            />
          ))}
          {Object.keys(errors).length > 0 ? (
            <p role="alert" className="field-error">
              {t("ask.fixFields")}
            </p>
          ) : null}
          <button type="submit" disabled={disabled}>
            {t("ask.sendAnswers")}
          </button>
        </form>
      ) : (
        <>
          {request.kind === "choice" ? (
            <div className="choices">
              {(request.options ?? []).map((o) => (
                <button type="button" key={o} disabled={disabled} onClick={() => onReply(o)}>
                  {o}
                </button>
              ))}
            </div>
          ) : null}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (text.trim()) onReply(text.trim());
            }}
          >
            <label htmlFor={textId}>{t(request.kind === "choice" ? "ask.ownWords" : "ask.yourAnswer")}</label>
            <textarea id={textId} rows={2} value={text} disabled={disabled} onChange={(e) => setText(e.target.value)} />
            <button type="submit" disabled={disabled || !text.trim()}>
              {t("ask.reply")}
            </button>
          </form>
        </>
      )}
    </section>
  );
}
