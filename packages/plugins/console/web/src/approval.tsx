import { type ReactNode, useId, useState } from "react";
import type { ApprovalDecision } from "./api";
import { type Translate, useI18n } from "./i18n";
import { closeOnEscape, useReturnFocus } from "./keyboard";
import type { Item, PendingCall } from "./transcript";

type ApprovalItem = Extract<Item, { kind: "approval" }>;

/** The edited arguments as an object, or why they are not one (checked as the person types). */
export function parseArgs(text: string, t: Translate): { args: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    return { problem: t("approval.notJson", { detail: (e as Error).message }) };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { problem: t("approval.notObject") };
  return { args: value as Record<string, unknown> };
}

function CallSummary({ call }: { call: PendingCall }): ReactNode {
  return (
    <li className="approval-call" data-tool-call={call.tool_call_id}>
      <p>
        <code className="approval-tool">{call.tool}</code>
        {call.reason ? <span className="muted"> · {call.reason}</span> : null}
      </p>
      <pre className="code">{JSON.stringify(call.args, null, 2)}</pre>
    </li>
  );
}

/**
 * A run paused for approval: its pending calls and Approve / Edit arguments / Reject with a reason. `onDecide`
 * resolves when the decision was taken and rejects with the server's refusal (an edit that fails the tool's
 * schema), which is shown here while the run stays paused.
 */
export function ApprovalCard({
  item,
  pending,
  onDecide,
}: {
  item: ApprovalItem;
  /** The run still waits on this card (false once decided, or while another run holds the thread). */
  pending: boolean;
  onDecide(decision: ApprovalDecision): Promise<void>;
}): ReactNode {
  const { t, locale } = useI18n();
  const id = useId();
  const [mode, setMode] = useState<"choose" | "edit" | "reject">("choose");
  const [draft, setDraft] = useState(() => JSON.stringify(item.calls[0]?.args ?? {}, null, 2));
  const [reason, setReason] = useState("");
  const [serverProblem, setServerProblem] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  // Escape leaves the argument editor or the reason box for the three choices, focus back on the one that opened it.
  const editButton = useReturnFocus<HTMLButtonElement>(mode === "edit");
  const rejectButton = useReturnFocus<HTMLButtonElement>(mode === "reject");
  const back = closeOnEscape(() => {
    if (!sending) setMode("choose");
  });
  const parsed = parseArgs(draft, t);
  const localProblem = "problem" in parsed ? parsed.problem : null;
  const live = pending && !item.decided;

  const decide = async (decision: ApprovalDecision) => {
    setSending(true);
    setServerProblem(null);
    try {
      await onDecide(decision);
    } catch (e) {
      const where = (e as { where?: string }).where;
      const message = (e as Error).message;
      setServerProblem(where && !message.includes(where) ? t("approval.at", { message, where }) : message);
    } finally {
      setSending(false);
    }
  };
  const single = item.calls.length === 1;

  return (
    <section className="approval-card" aria-labelledby={`${id}-title`} data-testid="approval-card">
      <p className="approval-title" id={`${id}-title`}>
        <strong>{single ? t("approval.one") : t("approval.many", { count: item.calls.length })}</strong>
        {item.decided ? <span className="badge badge-success">{t("approval.answered")}</span> : null}
      </p>
      <ul className="approval-calls">
        {item.calls.map((call) => (
          <CallSummary key={call.tool_call_id} call={call} />
        ))}
      </ul>
      {live && item.expiresAt ? (
        <p className="muted">{t("approval.waitsUntil", { time: new Date(item.expiresAt).toLocaleString(locale) })}</p>
      ) : null}
      {live && mode === "edit" ? (
        <form
          className="approval-edit"
          onKeyDown={back}
          onSubmit={(e) => {
            e.preventDefault();
            if ("args" in parsed) void decide({ decision: "edit", args: parsed.args });
          }}
        >
          <label htmlFor={`${id}-args`}>{t("approval.argsLabel")}</label>
          <textarea
            id={`${id}-args`}
            className="code"
            rows={Math.min(12, draft.split("\n").length + 1)}
            spellCheck={false}
            value={draft}
            aria-invalid={localProblem || serverProblem ? true : undefined}
            aria-describedby={`${id}-args-problem`}
            onChange={(e) => {
              setDraft(e.target.value);
              setServerProblem(null);
            }}
          />
          <p id={`${id}-args-problem`} className="field-error" role="alert" data-testid="approval-problem">
            {localProblem ?? serverProblem ?? ""}
          </p>
          <div className="approval-actions">
            <button type="submit" className="primary" disabled={sending || localProblem !== null}>
              {t("approval.runWithArgs")}
            </button>
            <button type="button" onClick={() => setMode("choose")} disabled={sending}>
              {t("approval.back")}
            </button>
          </div>
        </form>
      ) : null}
      {live && mode === "reject" ? (
        <form
          className="approval-edit"
          onKeyDown={back}
          onSubmit={(e) => {
            e.preventDefault();
            void decide(reason.trim() ? { decision: "reject", reason: reason.trim() } : { decision: "reject" });
          }}
        >
          <label htmlFor={`${id}-reason`}>{t("approval.reasonLabel")}</label>
          <textarea id={`${id}-reason`} rows={2} value={reason} onChange={(e) => setReason(e.target.value)} />
          {serverProblem ? (
            <p className="field-error" role="alert">
              {serverProblem}
            </p>
          ) : null}
          <div className="approval-actions">
            <button type="submit" className="danger" disabled={sending}>
              {t("approval.reject")}
            </button>
            <button type="button" onClick={() => setMode("choose")} disabled={sending}>
              {t("approval.back")}
            </button>
          </div>
        </form>
      ) : null}
      {live && mode === "choose" ? (
        <div className="approval-actions">
          <button type="button" className="primary" disabled={sending} onClick={() => void decide({ decision: "approve" })}>
            {t("approval.approve")}
          </button>
          {single ? (
            <button ref={editButton} type="button" disabled={sending} onClick={() => setMode("edit")}>
              {t("approval.editArgs")}
            </button>
          ) : null}
          <button ref={rejectButton} type="button" disabled={sending} onClick={() => setMode("reject")}>
            {t("approval.rejectOpen")}
          </button>
          {serverProblem ? (
            <p className="field-error" role="alert">
              {serverProblem}
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
