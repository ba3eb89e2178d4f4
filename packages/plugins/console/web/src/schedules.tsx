import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { type ApiError, api } from "./api";
import { useI18n } from "./i18n";

interface Task {
  id: string;
  name: string | null;
  kind: "once" | "cron";
  cron: string | null;
  run_at: string | null;
  timezone: string;
  prompt: string;
  state: string;
  next_fire_at: string | null;
  last_status: string | null;
  run_count: number;
  running: boolean;
}

export function Schedules(): ReactNode {
  const { t, locale } = useI18n();
  const [tasks, setTasks] = useState<Task[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [form, setForm] = useState({ name: "", prompt: "", when: "cron", cron: "0 9 * * 1-5", at: "" });
  const load = useCallback(() => {
    api<{ tasks: Task[] }>("/scheduled-tasks")
      .then(({ tasks }) => setTasks(tasks))
      .catch((e: ApiError) => setError(e.status === 404 ? t("schedules.disabled") : e.message));
  }, [t]);
  useEffect(load, [load]);

  const act = (id: string, action: "pause" | "resume" | "trigger") =>
    api(`/scheduled-tasks/${encodeURIComponent(id)}/${action}`, { method: "POST" })
      .then(() => {
        setNote(t(action === "trigger" ? "schedules.triggered" : action === "pause" ? "schedules.paused" : "schedules.resumed"));
        load();
      })
      .catch((e: Error) => setError(e.message));

  const add = (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const body = {
      prompt: form.prompt,
      ...(form.name.trim() ? { name: form.name.trim() } : {}),
      ...(form.when === "cron" ? { cron: form.cron } : { at: form.at }),
    };
    api("/scheduled-tasks", { method: "POST", json: body })
      .then(() => {
        setNote(t("schedules.added"));
        setForm((f) => ({ ...f, name: "", prompt: "" }));
        load();
      })
      .catch((e: Error) => setError(e.message));
  };

  return (
    <main className="page">
      <h1>{t("schedules.title")}</h1>
      {error ? <p role="alert">{error}</p> : null}
      {note ? <p aria-live="polite">{note}</p> : null}
      <table className="tasks">
        <caption className="sr-only">{t("schedules.caption")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("schedules.col.task")}</th>
            <th scope="col">{t("schedules.col.when")}</th>
            <th scope="col">{t("schedules.col.state")}</th>
            <th scope="col">{t("schedules.col.next")}</th>
            <th scope="col">{t("schedules.col.last")}</th>
            <th scope="col">{t("schedules.col.actions")}</th>
          </tr>
        </thead>
        <tbody>
          {(tasks ?? []).map((task) => (
            <tr key={task.id} data-task={task.id}>
              <td>
                <strong>{task.name ?? task.id}</strong>
                <br />
                <span className="muted">{task.prompt.slice(0, 80)}</span>
              </td>
              <td>{task.kind === "cron" ? `${task.cron} (${task.timezone})` : task.run_at}</td>
              <td>{task.running ? t("schedules.running") : task.state}</td>
              <td>{task.next_fire_at ? new Date(task.next_fire_at).toLocaleString(locale) : "—"}</td>
              <td>{t("schedules.runs", { status: task.last_status ?? "—", count: task.run_count })}</td>
              <td className="actions">
                {task.state === "paused" ? (
                  <button type="button" onClick={() => void act(task.id, "resume")}>
                    {t("schedules.resume")}
                  </button>
                ) : (
                  <button type="button" onClick={() => void act(task.id, "pause")}>
                    {t("schedules.pause")}
                  </button>
                )}
                <button type="button" onClick={() => void act(task.id, "trigger")}>
                  {t("schedules.runNow")}
                </button>
              </td>
            </tr>
          ))}
          {tasks?.length === 0 ? (
            <tr>
              <td colSpan={6}>{t("schedules.none")}</td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <form className="card add-task" onSubmit={add}>
        <h2>{t("schedules.add")}</h2>
        <label>
          {t("schedules.name")} <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        </label>
        <label>
          {t("schedules.prompt")}{" "}
          <textarea required rows={2} value={form.prompt} onChange={(e) => setForm({ ...form, prompt: e.target.value })} />
        </label>
        <fieldset>
          <legend>{t("schedules.when")}</legend>
          <label className="check">
            <input type="radio" name="when" checked={form.when === "cron"} onChange={() => setForm({ ...form, when: "cron" })} />{" "}
            {t("schedules.recurring")}
          </label>
          <label className="check">
            <input type="radio" name="when" checked={form.when === "at"} onChange={() => setForm({ ...form, when: "at" })} />{" "}
            {t("schedules.once")}
          </label>
        </fieldset>
        {form.when === "cron" ? (
          <label>
            {t("schedules.cron")} <input value={form.cron} onChange={(e) => setForm({ ...form, cron: e.target.value })} />
          </label>
        ) : (
          <label>
            {t("schedules.at")}{" "}
            <input placeholder="2026-12-24T09:00" value={form.at} onChange={(e) => setForm({ ...form, at: e.target.value })} />
          </label>
        )}
        <button type="submit" className="primary" disabled={!form.prompt.trim()}>
          {t("schedules.addButton")}
        </button>
      </form>
    </main>
  );
}
