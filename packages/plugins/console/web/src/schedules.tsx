import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { type ApiError, api } from "./api";

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
  const [tasks, setTasks] = useState<Task[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [form, setForm] = useState({ name: "", prompt: "", when: "cron", cron: "0 9 * * 1-5", at: "" });
  const load = useCallback(() => {
    api<{ tasks: Task[] }>("/scheduled-tasks")
      .then(({ tasks }) => setTasks(tasks))
      .catch((e: ApiError) =>
        setError(e.status === 404 ? "Scheduled tasks are not enabled (add @antler/plugin-scheduler to plugins:)." : e.message),
      );
  }, []);
  useEffect(load, [load]);

  const act = (id: string, action: "pause" | "resume" | "trigger") =>
    api(`/scheduled-tasks/${encodeURIComponent(id)}/${action}`, { method: "POST" })
      .then(() => {
        setNote(action === "trigger" ? "Triggered: the run is starting in the server." : `Task ${action}d.`);
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
        setNote("Task added.");
        setForm((f) => ({ ...f, name: "", prompt: "" }));
        load();
      })
      .catch((e: Error) => setError(e.message));
  };

  return (
    <main className="page">
      <h1>Scheduled tasks</h1>
      {error ? <p role="alert">{error}</p> : null}
      {note ? <p aria-live="polite">{note}</p> : null}
      <table className="tasks">
        <caption className="sr-only">Your scheduled tasks</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">When</th>
            <th scope="col">State</th>
            <th scope="col">Next</th>
            <th scope="col">Last</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(tasks ?? []).map((t) => (
            <tr key={t.id} data-task={t.id}>
              <td>
                <strong>{t.name ?? t.id}</strong>
                <br />
                <span className="muted">{t.prompt.slice(0, 80)}</span>
              </td>
              <td>{t.kind === "cron" ? `${t.cron} (${t.timezone})` : t.run_at}</td>
              <td>{t.running ? "running" : t.state}</td>
              <td>{t.next_fire_at ? new Date(t.next_fire_at).toLocaleString() : "—"}</td>
              <td>
                {t.last_status ?? "—"} ({t.run_count} runs)
              </td>
              <td className="actions">
                {t.state === "paused" ? (
                  <button type="button" onClick={() => void act(t.id, "resume")}>
                    Resume
                  </button>
                ) : (
                  <button type="button" onClick={() => void act(t.id, "pause")}>
                    Pause
                  </button>
                )}
                <button type="button" onClick={() => void act(t.id, "trigger")}>
                  Run now
                </button>
              </td>
            </tr>
          ))}
          {tasks?.length === 0 ? (
            <tr>
              <td colSpan={6}>No scheduled tasks yet.</td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <form className="card add-task" onSubmit={add}>
        <h2>Add a task</h2>
        <label>
          Name <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        </label>
        <label>
          Prompt <textarea required rows={2} value={form.prompt} onChange={(e) => setForm({ ...form, prompt: e.target.value })} />
        </label>
        <fieldset>
          <legend>When</legend>
          <label className="check">
            <input type="radio" name="when" checked={form.when === "cron"} onChange={() => setForm({ ...form, when: "cron" })} /> Recurring
            (cron)
          </label>
          <label className="check">
            <input type="radio" name="when" checked={form.when === "at"} onChange={() => setForm({ ...form, when: "at" })} /> Once (ISO
            time)
          </label>
        </fieldset>
        {form.when === "cron" ? (
          <label>
            Cron (five fields) <input value={form.cron} onChange={(e) => setForm({ ...form, cron: e.target.value })} />
          </label>
        ) : (
          <label>
            At <input placeholder="2026-12-24T09:00" value={form.at} onChange={(e) => setForm({ ...form, at: e.target.value })} />
          </label>
        )}
        <button type="submit" className="primary" disabled={!form.prompt.trim()}>
          Add task
        </button>
      </form>
    </main>
  );
}
