// Talks to the gateway's API from the page. Sign-in trades the API key for a session cookie the gateway issues
// (HttpOnly, SameSite=Strict): the page never keeps the key, and every tab and deep link of this origin is signed in
// until the session expires or someone signs out.

/** Sent with every request: the gateway refuses cookie-authenticated writes without it (another site cannot send it). */
const CSRF_HEADER = "x-antler-csrf";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    /** The field or config path the error names (a refused edit's argument). */
    readonly where?: string,
  ) {
    super(message);
  }
}

function headers(extra?: HeadersInit): Headers {
  const h = new Headers(extra);
  h.set(CSRF_HEADER, "1");
  return h;
}

/** Starts a session with the key (the gateway answers with the cookie); a wrong key throws its 401. */
export async function signIn(key: string): Promise<void> {
  const response = await fetch("/api/session", { method: "POST", headers: headers({ authorization: `Bearer ${key}` }) });
  if (!response.ok) throw await failure(response);
}

/** Ends the session on the server (the cookie is then worthless everywhere) and drops the cookie. */
export async function signOut(): Promise<void> {
  await fetch("/api/session", { method: "DELETE", headers: headers() }).catch(() => undefined);
}

/** How this page is signed in: `session` (a cookie), or `none` (the gateway asks for no key). */
export async function sessionInfo(): Promise<{ user: string; via: "key" | "session" | "none"; expires_at: string | null }> {
  return api("/session");
}

async function failure(response: Response): Promise<ApiError> {
  let body: { error?: { code?: string; message?: string; hint?: string; where?: string } } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    // Not JSON: keep the status line.
  }
  return new ApiError(
    response.status,
    body.error?.code ?? `HTTP_${response.status}`,
    body.error?.message ?? `${response.status} ${response.statusText}`,
    body.error?.hint,
    body.error?.where,
  );
}

/** A JSON API call; a non-2xx answer throws an ApiError with the gateway's code, message and hint. */
export async function api<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const { json, ...rest } = init;
  const h = headers(rest.headers);
  if (json !== undefined) h.set("content-type", "application/json");
  const response = await fetch(`/api${path}`, { ...rest, headers: h, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** The raw response (for files); non-2xx throws like `api`. */
export async function apiRaw(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`/api${path}`, { ...init, headers: headers(init.headers) });
  if (!response.ok) throw await failure(response);
  return response;
}

export interface SseFrame {
  id: number | null;
  event: string;
  data: unknown;
}

/** Splits an SSE body into frames as they arrive. */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const stop = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        let event = "message";
        let id: number | null = null;
        let data: string | undefined;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon === -1 ? line : line.slice(0, colon);
          const text = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = text;
          else if (field === "id") id = Number(text);
          else if (field === "data") data = data === undefined ? text : `${data}\n${text}`;
        }
        if (data !== undefined) yield { id, event, data: JSON.parse(data) as unknown };
      }
    }
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}

export interface RunHandlers {
  onFrame(frame: SseFrame): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The frames of one run as the page follows it: each is handed over once, in order, whatever drops between. */
interface Follow {
  runId: string | null;
  last: number;
  ended: boolean;
}

async function consume(follow: Follow, body: ReadableStream<Uint8Array>, handlers: RunHandlers, signal: AbortSignal): Promise<void> {
  for await (const frame of readSse(body, signal)) {
    if (frame.id !== null) {
      // A frame at or before the last one seen is already on screen (a join that overlapped): never twice.
      if (frame.id <= follow.last) continue;
      follow.last = frame.id;
    }
    if (frame.event === "metadata") follow.runId = (frame.data as { run_id?: string }).run_id ?? follow.runId;
    handlers.onFrame(frame);
    // A pause ends the stream but not the run: once resumed, its events go on after this one (same run id).
    const paused = frame.event === "end" && (frame.data as { stop_reason?: unknown } | null)?.stop_reason === "paused";
    if ((frame.event === "end" && !paused) || frame.event === "error") follow.ended = true;
  }
}

/** Joins the run after `follow.last` until its end, joining again after each drop (with backoff). */
async function rejoin(threadId: string, follow: Follow, handlers: RunHandlers, signal: AbortSignal): Promise<void> {
  for (let attempt = 0; !follow.ended && !signal.aborted && follow.runId && attempt < 20; attempt++) {
    if (attempt > 0) await sleep(Math.min(250 * 2 ** (attempt - 1), 4000));
    try {
      const joined = await fetch(`/api/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(follow.runId)}/stream`, {
        headers: headers({ "last-event-id": String(follow.last), accept: "text/event-stream" }),
        signal,
      });
      if (joined.status === 204) return;
      if (!joined.ok || !joined.body) throw await failure(joined);
      attempt = 0;
      await consume(follow, joined.body, handlers, signal);
    } catch (error) {
      if (signal.aborted || (error instanceof ApiError && error.status < 500)) throw error;
    }
  }
}

/**
 * Starts a run and follows it to its end. The run keeps going on the server if the connection drops
 * (`on_disconnect: continue`); the page then joins it again after the last frame it saw (`Last-Event-ID`),
 * so no event is lost or repeated. Cancelling is explicit (the Cancel button), never a side effect of a drop.
 */
export async function followRun(
  threadId: string,
  message: string,
  handlers: RunHandlers,
  signal: AbortSignal,
  options: { model?: string | undefined; thinking?: boolean | undefined; agent?: string | undefined } = {},
): Promise<void> {
  const response = await fetch(`/api/threads/${encodeURIComponent(threadId)}/runs/stream`, {
    method: "POST",
    headers: headers({ "content-type": "application/json", accept: "text/event-stream" }),
    body: JSON.stringify({
      input: { messages: [{ role: "user", content: message }] },
      on_disconnect: "continue",
      ...(options.model ? { model: options.model } : {}),
      ...(options.thinking !== undefined ? { thinking_enabled: options.thinking } : {}),
      ...(options.agent ? { agent_name: options.agent } : {}),
    }),
    signal,
  });
  if (!response.ok || !response.body) throw await failure(response);
  const follow: Follow = { runId: response.headers.get("x-run-id"), last: 0, ended: false };
  try {
    await consume(follow, response.body, handlers, signal);
  } catch (error) {
    if (signal.aborted) throw error;
  }
  // The first join waits a moment: the connection just dropped, so the network may still be away.
  if (!follow.ended && !signal.aborted) await sleep(250);
  await rejoin(threadId, follow, handlers, signal);
}

/**
 * Follows a run someone already started (this page before a reload, another tab, another device) from its first
 * frame, then live until its end: the page that opens a thread with a running run draws it as the starter does.
 */
export async function attachRun(threadId: string, runId: string, handlers: RunHandlers, signal: AbortSignal): Promise<void> {
  await rejoin(threadId, { runId, last: 0, ended: false }, handlers, signal);
}

export interface RunSummary {
  run_id: string;
  status: "pending" | "running" | "paused" | "success" | "error" | "cancelled";
  trace_id: string;
  /** A paused run's interrupt: `value` is what its `run_paused` event showed (an approval's calls). */
  interrupt?: { value?: unknown } | null;
  /** What the run was asked: its context names the custom agent it ran with (`agent_name`). */
  kwargs?: { context?: { agent_name?: unknown } };
}

/** The custom agent a run ran with, or null for the default agent. */
export function runAgent(run: RunSummary | null | undefined): string | null {
  const name = run?.kwargs?.context?.agent_name;
  return typeof name === "string" ? name : null;
}

/** What a person decided on a paused run's calls (the body of `POST .../runs/{run}/resume`). */
export type ApprovalDecision =
  | { decision: "approve" }
  | { decision: "reject"; reason?: string }
  | { decision: "edit"; args: Record<string, unknown> };

/**
 * Sends the decision and follows the resumed run to its end. A resumed run's events go on after its paused
 * part's last one (same run id), and the resume route answers only when the run ends, so the page first reads
 * where the paused part ended, sends the decision, and joins after that point as soon as the run has left
 * `paused`. A refused decision (400: the run stays paused) is thrown before anything is drawn.
 */
export async function resumeRun(
  threadId: string,
  runId: string,
  decision: ApprovalDecision,
  onStarted: () => void,
  handlers: RunHandlers,
  signal: AbortSignal,
): Promise<void> {
  const path = `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}`;
  const pausedPart = await replayRun(threadId, runId, signal).catch(() => [] as SseFrame[]);
  const last = pausedPart.reduce((max, frame) => Math.max(max, frame.id ?? 0), 0);
  const answered = api(`${path}/resume`, { method: "POST", json: { ...decision, on_disconnect: "continue" }, signal }).then(
    () => null,
    (error: unknown) => error,
  );
  for (;;) {
    const done = await Promise.race([answered, sleep(150).then(() => undefined)]);
    if (done !== undefined) {
      if (done !== null) throw done;
      break;
    }
    const record = await api<RunSummary>(path, { signal });
    if (record.status !== "paused") break;
  }
  onStarted();
  // From here the decision was taken: a failed join is no refusal of it. The caller reads the thread as saved.
  await rejoin(threadId, { runId, last, ended: false }, handlers, signal).catch((error: unknown) => {
    if (signal.aborted || !(error instanceof ApiError) || error.status >= 500) throw error;
  });
}

/** The thread's newest run, or null when it has none. */
export async function latestRun(threadId: string, signal?: AbortSignal): Promise<RunSummary | null> {
  const { runs } = await api<{ runs: RunSummary[] }>(`/threads/${encodeURIComponent(threadId)}/runs?limit=1`, signal ? { signal } : {});
  return runs[0] ?? null;
}

/** Every frame of a run, from its start (finished runs replay from the run event log). */
export async function replayRun(threadId: string, runId: string, signal?: AbortSignal): Promise<SseFrame[]> {
  const response = await apiRaw(`/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/stream`, {
    headers: { accept: "text/event-stream" },
    ...(signal ? { signal } : {}),
  });
  const frames: SseFrame[] = [];
  if (!response.body) return frames;
  for await (const frame of readSse(response.body, signal)) frames.push(frame);
  return frames;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;
  return `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}
