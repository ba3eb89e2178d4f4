import { type ReactNode, useCallback, useEffect, useState } from "react";
import { type ApiError, api, apiRaw } from "./api";
import { useT } from "./i18n";

interface Batch {
  id: string;
  title: string;
  state: "active" | "completed" | "cancelled";
  total_items: number;
  created_at: string;
  trace_id: string;
}
interface BatchStatus extends Batch {
  done: number;
  counts: Record<string, number>;
  verdicts: Record<string, number>;
}
interface BatchItem {
  key: string;
  state: string;
  verdict: string | null;
  error: string | null;
  attempts: number;
}

const POLL_MS = 1000;

function BatchDetail({ id, onState }: { id: string; onState(state: string): void }): ReactNode {
  const t = useT();
  const [status, setStatus] = useState<BatchStatus | null>(null);
  const [items, setItems] = useState<BatchItem[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `tick` re-polls while the batch is active; onState is the parent's.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    (async () => {
      try {
        const s = await api<BatchStatus>(`/batches/${encodeURIComponent(id)}`);
        const text = await (await apiRaw(`/batches/${encodeURIComponent(id)}/items`)).text();
        if (!live) return;
        setStatus(s);
        onState(s.state);
        setItems(
          text
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as BatchItem),
        );
        if (s.state === "active") timer = setTimeout(() => setTick((n) => n + 1), POLL_MS);
      } catch (e) {
        if (live) setError((e as Error).message);
      }
    })();
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [id, tick]);

  if (error) return <p role="alert">{error}</p>;
  if (!status) return <p>{t("loading")}</p>;
  const percent = status.total_items === 0 ? 100 : Math.round((status.done / status.total_items) * 100);
  return (
    <section className="batch" aria-label={t("batch.label", { title: status.title })} data-state={status.state}>
      <h2>{status.title}</h2>
      <p>
        <span data-testid="batch-state" className={`badge badge-${status.state}`}>
          {status.state}
        </span>{" "}
        {t("batch.progressText", { done: status.done, total: status.total_items })}
        <code>{status.trace_id}</code>
      </p>
      <progress max={status.total_items} value={status.done} aria-label={t("batch.progress")}>
        {percent}%
      </progress>
      <p className="counts">
        {Object.entries(status.counts)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${k}: ${n}`)
          .join(" · ")}
        {t("batch.verdicts")}
        {Object.entries(status.verdicts)
          .filter(([k, n]) => n > 0 && k !== "none")
          .map(([k, n]) => `${k} ${n}`)
          .join(" · ") || t("batch.noVerdicts")}
      </p>
      {status.state === "active" ? (
        <button
          type="button"
          className="danger"
          onClick={() =>
            void api(`/batches/${encodeURIComponent(id)}/cancel`, { method: "POST" })
              .then(() => setTick((n) => n + 1))
              .catch((e: ApiError) => setError(e.message))
          }
        >
          {t("batch.cancel")}
        </button>
      ) : null}
      <table className="items">
        <caption className="sr-only">{t("batch.items")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("batch.col.item")}</th>
            <th scope="col">{t("batch.col.state")}</th>
            <th scope="col">{t("batch.col.verdict")}</th>
            <th scope="col">{t("batch.col.attempts")}</th>
            <th scope="col">{t("batch.col.error")}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((it) => (
            <tr key={it.key} data-item={it.key}>
              <td>{it.key}</td>
              <td>{it.state}</td>
              <td>{it.verdict ?? "—"}</td>
              <td>{it.attempts}</td>
              <td>{it.error ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function Batches(): ReactNode {
  const t = useT();
  const [batches, setBatches] = useState<Batch[] | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `reload` refreshes the list when the open batch changes state.
  useEffect(() => {
    api<{ batches: Batch[] }>("/batches")
      .then(({ batches }) => {
        setBatches(batches);
        setOpen((o) => o ?? batches[0]?.id ?? null);
      })
      .catch((e: ApiError) => setError(e.status === 404 ? t("batches.disabled") : e.message));
  }, [reload]);
  const onState = useCallback(
    (state: string) => {
      if (batches?.find((b) => b.id === open)?.state !== state) setReload((r) => r + 1);
    },
    [batches, open],
  );
  return (
    <div className="page two-col">
      <nav aria-label={t("batches.title")}>
        <h1>{t("batches.title")}</h1>
        {error ? <p role="alert">{error}</p> : null}
        {batches?.length === 0 ? <p className="muted">{t("batches.none")}</p> : null}
        <ul>
          {(batches ?? []).map((b) => (
            <li key={b.id}>
              <button type="button" className="link" aria-pressed={open === b.id} onClick={() => setOpen(b.id)}>
                {b.title} <span className="muted">{t("batches.summary", { state: b.state, count: b.total_items })}</span>
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <main className="detail">{open ? <BatchDetail key={open} id={open} onState={onState} /> : null}</main>
    </div>
  );
}
