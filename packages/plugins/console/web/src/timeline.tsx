import { type ReactNode, useEffect, useState } from "react";
import { ApiError, api, replayRun } from "./api";
import { formatMs } from "./cards";
import { useI18n } from "./i18n";

interface Span {
  kind: "model" | "tool" | "middleware";
  name: string;
  started_at: number;
  duration_ms: number;
  status: string;
  tool_call_id?: string;
}

interface RunRecord {
  run_id: string;
  status: string;
  created_at?: string;
  trace_id?: string | null;
}

interface Changes {
  added?: Array<{ path: string }>;
  modified?: Array<{ path: string }>;
  deleted?: Array<{ path: string }>;
}

/** One run on one time axis: every model call and tool call as a bar, its trace id, and what it changed. */
export function Timeline({ threadId, runId: initialRun }: { threadId: string; runId: string | null }): ReactNode {
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const { t, locale } = useI18n();
  const [runId, setRunId] = useState<string | null>(initialRun);
  const [spans, setSpans] = useState<Span[] | null>(null);
  const [traceId, setTraceId] = useState<string | null>(null);
  const [changes, setChanges] = useState<Changes | null | "none">(null);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    api<{ runs: RunRecord[] }>(`/threads/${encodeURIComponent(threadId)}/runs?limit=50`)
      .then(({ runs }) => {
        setRuns(runs);
        setRunId((current) => current ?? runs[0]?.run_id ?? null);
      })
      .catch((e: Error) => setError(e.message));
  }, [threadId]);

  useEffect(() => {
    if (!runId) return;
    const abort = new AbortController();
    setSpans(null);
    setChanges(null);
    setError(null);
    replayRun(threadId, runId, abort.signal)
      .then((frames) => {
        const found: Span[] = [];
        for (const f of frames) {
          const d = f.data as Record<string, unknown>;
          if (f.event === "metadata") setTraceId(String(d.trace_id ?? ""));
          if (f.event === "custom" && d.type === "console_span") found.push(d as unknown as Span);
        }
        setSpans(found.sort((a, b) => a.started_at - b.started_at));
      })
      .catch((e: Error) => {
        if (!abort.signal.aborted) setError(e instanceof ApiError && e.status === 410 ? t("timeline.expired") : e.message);
      });
    api<Changes>(`/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/changes`)
      .then(setChanges)
      .catch(() => setChanges("none"));
    return () => abort.abort();
  }, [threadId, runId, t]);

  const t0 = spans && spans.length > 0 ? Math.min(...spans.map((s) => s.started_at)) : 0;
  const t1 = spans && spans.length > 0 ? Math.max(...spans.map((s) => s.started_at + s.duration_ms)) : 1;
  const total = Math.max(1, t1 - t0);

  return (
    <section className="timeline" aria-label={t("timeline.title")}>
      <h2>{t("timeline.title")}</h2>
      <label>
        {t("timeline.run")}{" "}
        <select value={runId ?? ""} onChange={(e) => setRunId(e.target.value)}>
          {runs.map((r) => (
            <option key={r.run_id} value={r.run_id}>
              {r.run_id.slice(0, 8)} · {r.status}
              {r.created_at ? ` · ${new Date(r.created_at).toLocaleTimeString(locale)}` : ""}
            </option>
          ))}
        </select>
      </label>
      {traceId ? (
        <p className="trace">
          {t("timeline.traceId")} <code data-testid="trace-id">{traceId}</code>{" "}
          <button
            type="button"
            onClick={() => {
              void navigator.clipboard
                ?.writeText(traceId)
                .then(() => setCopied(true))
                .catch(() => setCopied(false));
            }}
          >
            {copied ? t("copy.done") : t("timeline.copyTrace")}
          </button>
        </p>
      ) : null}
      {error ? <p role="alert">{error}</p> : null}
      {spans === null && !error ? <p>{t("loading")}</p> : null}
      {spans && spans.length === 0 ? <p>{t("timeline.noSpans")}</p> : null}
      {spans && spans.length > 0 ? (
        <ol className="spans" aria-label={t("timeline.total", { duration: formatMs(total) })}>
          {spans.map((s, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: spans of a finished run never reorder; two may share a name
            <li key={`${s.kind}-${s.tool_call_id ?? ""}-${i}`} className={`span span-${s.kind}`} data-span={s.kind} data-name={s.name}>
              <span className="span-label" title={s.name}>
                {s.kind === "middleware" ? "mw" : s.kind} <strong>{s.kind === "middleware" ? s.name.split("/").pop() : s.name}</strong>
              </span>
              <span className="span-track" aria-hidden="true">
                <span
                  className={`span-bar span-${s.status}`}
                  style={{ left: `${((s.started_at - t0) / total) * 100}%`, width: `${Math.max(0.5, (s.duration_ms / total) * 100)}%` }}
                />
              </span>
              <span className="span-duration">{formatMs(s.duration_ms)}</span>
            </li>
          ))}
        </ol>
      ) : null}
      <h3>{t("timeline.changes")}</h3>
      {changes === null ? <p>{t("loading")}</p> : null}
      {changes === "none" ? <p>{t("timeline.notRecorded")}</p> : null}
      {changes && changes !== "none" ? (
        <ul className="changes">
          {(changes.added ?? []).map((c) => (
            <li key={`a${c.path}`}>{t("timeline.added", { path: c.path })}</li>
          ))}
          {(changes.modified ?? []).map((c) => (
            <li key={`m${c.path}`}>{t("timeline.modified", { path: c.path })}</li>
          ))}
          {(changes.deleted ?? []).map((c) => (
            <li key={`d${c.path}`}>{t("timeline.deleted", { path: c.path })}</li>
          ))}
          {(changes.added?.length ?? 0) + (changes.modified?.length ?? 0) + (changes.deleted?.length ?? 0) === 0 ? (
            <li>{t("timeline.noChanges")}</li>
          ) : null}
        </ul>
      ) : null}
    </section>
  );
}
