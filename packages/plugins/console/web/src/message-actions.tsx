import { type ReactNode, useCallback, useEffect, useId, useState } from "react";
import { api } from "./api";
import { useT } from "./i18n";
import { closeOnEscape, useFocusOnOpen, useReturnFocus } from "./keyboard";

/** Copies `text` to the clipboard; says so for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }): ReactNode {
  const t = useT();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button
      type="button"
      className="link"
      // The accessible name contains the visible text in both states (WCAG 2.5.3, axe label-content-name-mismatch).
      aria-label={copied ? t("copy.done") : label}
      onClick={() =>
        void navigator.clipboard
          ?.writeText(text)
          .then(() => setCopied(true))
          .catch(() => undefined)
      }
    >
      {copied ? t("copy.done") : t("copy.action")}
    </button>
  );
}

/**
 * The user's message with Copy and Edit. Editing sends the new text as a new branch from just before this
 * message (`onResend`); the thread as it was stays reachable. Edit needs the message's saved id (`canBranch`).
 */
export function HumanMessage({
  text,
  canBranch,
  onResend,
}: {
  text: string;
  canBranch: boolean;
  onResend(text: string): Promise<void>;
}): ReactNode {
  const t = useT();
  const id = useId();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(text);
  const [problem, setProblem] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const editButton = useReturnFocus<HTMLButtonElement>(editing);
  const editField = useFocusOnOpen<HTMLTextAreaElement>(editing);
  if (editing) {
    return (
      <form
        className="msg msg-human msg-editing"
        onKeyDown={closeOnEscape(() => {
          if (!sending) setEditing(false);
        })}
        onSubmit={(e) => {
          e.preventDefault();
          if (!draft.trim()) return;
          setSending(true);
          setProblem(null);
          onResend(draft.trim())
            .catch((err: Error) => setProblem(err.message))
            .finally(() => setSending(false));
        }}
      >
        <label htmlFor={`${id}-edit`} className="who">
          {t("msg.editLabel")}
        </label>
        <textarea id={`${id}-edit`} ref={editField} rows={3} value={draft} onChange={(e) => setDraft(e.target.value)} />
        {problem ? <p role="alert">{problem}</p> : null}
        <div className="msg-actions">
          <button type="submit" className="primary" disabled={sending || !draft.trim()}>
            {t("msg.sendBranch")}
          </button>
          <button type="button" onClick={() => setEditing(false)} disabled={sending}>
            {t("msg.cancel")}
          </button>
        </div>
      </form>
    );
  }
  return (
    <div className="msg msg-human">
      <span className="who">{t("msg.you")}</span>
      <p>{text}</p>
      <div className="msg-actions">
        <CopyButton text={text} label={t("msg.copyMine")} />
        {canBranch ? (
          <button
            ref={editButton}
            type="button"
            className="link"
            aria-label={t("msg.editAndResend")}
            onClick={() => {
              setDraft(text);
              setEditing(true);
            }}
          >
            {t("msg.edit")}
          </button>
        ) : null}
      </div>
    </div>
  );
}

/** The thread's title with Rename: `PATCH /api/threads/{id}`. */
export function ThreadTitle({
  threadId,
  title,
  onRenamed,
}: {
  threadId: string;
  title: string | null;
  onRenamed(title: string): void;
}): ReactNode {
  const t = useT();
  const id = useId();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const renameButton = useReturnFocus<HTMLButtonElement>(editing);
  const titleField = useFocusOnOpen<HTMLInputElement>(editing);
  if (!editing) {
    return (
      <>
        <h1>{title ?? t("threads.untitled")}</h1>
        <button
          ref={renameButton}
          type="button"
          className="link"
          onClick={() => {
            setDraft(title ?? "");
            setProblem(null);
            setEditing(true);
          }}
        >
          {t("title.rename")}
        </button>
      </>
    );
  }
  return (
    <form
      className="rename"
      onKeyDown={closeOnEscape(() => setEditing(false))}
      onSubmit={(e) => {
        e.preventDefault();
        api<{ title: string }>(`/threads/${encodeURIComponent(threadId)}`, { method: "PATCH", json: { title: draft } })
          .then((record) => {
            onRenamed(record.title);
            setEditing(false);
          })
          .catch((err: Error) => setProblem(err.message));
      }}
    >
      <label htmlFor={`${id}-title`} className="sr-only">
        {t("title.field")}
      </label>
      <input id={`${id}-title`} ref={titleField} value={draft} maxLength={200} onChange={(e) => setDraft(e.target.value)} />
      <button type="submit" className="primary" disabled={!draft.trim()}>
        {t("title.save")}
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        {t("msg.cancel")}
      </button>
      {problem ? <p role="alert">{problem}</p> : null}
    </form>
  );
}

export interface ModelChoice {
  name: string;
  displayName?: string;
  /** The model can think before it answers (`supports_thinking`); only then does the page offer Thinking. */
  supportsThinking?: boolean;
}

export const THINKING_KEY = "antler.console.thinking";

function readThinking(): boolean | null {
  try {
    const stored = localStorage.getItem(THINKING_KEY);
    return stored === "on" ? true : stored === "off" ? false : null;
  } catch {
    return null; // storage blocked: the agent's default it is
  }
}

/**
 * `[choice, choose]`: thinking on or off for the next runs, kept in the browser for every thread (a way of working,
 * like the theme, rather than part of one conversation; each run's record keeps what it used). `null`: never
 * chosen, so runs take the agent's default.
 */
export function useThinkingChoice(): [boolean | null, (on: boolean) => void] {
  const [choice, setChoice] = useState<boolean | null>(readThinking);
  const choose = useCallback((on: boolean) => {
    setChoice(on);
    try {
      localStorage.setItem(THINKING_KEY, on ? "on" : "off");
    } catch {
      // Storage blocked: the choice holds for this page only.
    }
  }, []);
  return [choice, choose];
}

/** Thinking on or off for the next message; only drawn for a model that can think. */
export function ThinkingToggle({ checked, onChange }: { checked: boolean; onChange(on: boolean): void }): ReactNode {
  const t = useT();
  return (
    <label className="thinking-toggle">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <span>{t("thinking.label")}</span>
    </label>
  );
}

/** The models this user's role may run on (`GET /api/models`), read once per page. */
export function useModels(): ModelChoice[] {
  const [models, setModels] = useState<ModelChoice[]>([]);
  useEffect(() => {
    api<{ models: ModelChoice[] }>("/models")
      .then((r) => setModels(r.models))
      .catch(() => undefined);
  }, []);
  return models;
}

/** The model the next message runs on; empty: the agent's default. Hidden when there is nothing to choose. */
export function ModelPicker({
  models,
  value,
  onChange,
}: {
  models: ModelChoice[];
  value: string;
  onChange(name: string): void;
}): ReactNode {
  const t = useT();
  if (models.length < 2) return null;
  return (
    <label className="model-picker">
      <span>{t("model.label")}</span>
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{t("model.default")}</option>
        {models.map((m) => (
          <option key={m.name} value={m.name}>
            {m.displayName ?? m.name}
          </option>
        ))}
      </select>
    </label>
  );
}

export interface AgentChoice {
  name: string;
  description: string;
  /** The model its runs take unless one is picked; null: the default model. */
  model: string | null;
  /** Its thinking default; null: on. */
  thinking: boolean | null;
}

/** The user's custom agents (`GET /api/agents`), read once per page. */
export function useAgents(): AgentChoice[] {
  const [agents, setAgents] = useState<AgentChoice[]>([]);
  useEffect(() => {
    api<{ agents: AgentChoice[] }>("/agents")
      .then((r) => setAgents(r.agents))
      .catch(() => undefined);
  }, []);
  return agents;
}

/** The custom agent the next message runs with; empty: the default agent. Hidden when the user has none. */
export function AgentPicker({
  agents,
  value,
  onChange,
}: {
  agents: AgentChoice[];
  value: string;
  onChange(name: string): void;
}): ReactNode {
  const t = useT();
  if (agents.length === 0) return null;
  return (
    <label className="model-picker">
      <span>{t("agent.label")}</span>
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{t("agent.default")}</option>
        {/* A thread's agent that is gone from the list (deleted) still shows as the thread's. */}
        {value && !agents.some((a) => a.name === value) ? <option value={value}>{value}</option> : null}
        {agents.map((a) => (
          <option key={a.name} value={a.name} title={a.description || undefined}>
            {a.name}
          </option>
        ))}
      </select>
    </label>
  );
}
