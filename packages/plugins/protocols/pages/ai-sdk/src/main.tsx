// A small chat page on `useChat` from `@ai-sdk/react`, talking to Antler's AI SDK endpoint (`POST /ai-sdk/chat`):
// the chat id is the Antler thread id (kept in the URL), answers stream in as text and tool parts, Stop aborts the
// stream and cancels the run, and `resume: true` rejoins a run still going after a reload.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, getToolName, isToolUIPart, type UIMessage } from "ai";
import { type FormEvent, StrictMode, useEffect, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import { SignIn, ToolCard } from "../../shared/components.js";
import { gatewayUrl, putThreadIdInUrl, storedApiKey, threadIdFromUrl } from "../../shared/session.js";
import { loadChatHistory } from "./history.js";
import "../../shared/page.css";

interface RunMetadata {
  run_id?: string;
  thread_id?: string;
  trace_id?: string;
  stop_reason?: string;
}

function App() {
  const [apiKey, setApiKey] = useState(storedApiKey);
  const [threadId] = useState(() => {
    const id = threadIdFromUrl() ?? crypto.randomUUID();
    putThreadIdInUrl(id);
    return id;
  });
  const [history, setHistory] = useState<UIMessage[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  useEffect(() => {
    if (apiKey === null) return;
    loadChatHistory(gatewayUrl(), threadId, apiKey).then(
      (messages) => setHistory(messages ?? []),
      (error: unknown) => setLoadError(String(error)),
    );
  }, [apiKey, threadId]);
  if (apiKey === null) return <SignIn title="Antler · useChat" onKey={setApiKey} />;
  if (loadError !== null) return <p className="error">{loadError}</p>;
  // useChat reads its initial messages once per chat id, so the chat mounts after the thread's history is in.
  if (history === null) return <p className="empty">Loading…</p>;
  return <Chat apiKey={apiKey} threadId={threadId} initialMessages={history} />;
}

function Chat({ apiKey, threadId, initialMessages }: { apiKey: string; threadId: string; initialMessages: UIMessage[] }) {
  const transport = useMemo(
    () =>
      new DefaultChatTransport<UIMessage>({
        api: `${gatewayUrl()}/ai-sdk/chat`,
        headers: { authorization: `Bearer ${apiKey}` },
        // A dropped connection (a reload, a closed tab) leaves the run going, so the page can rejoin it.
        body: { on_disconnect: "continue" },
      }),
    [apiKey],
  );
  const { messages, sendMessage, status, stop, error } = useChat({ id: threadId, messages: initialMessages, transport, resume: true });
  const [input, setInput] = useState("");
  const [stopped, setStopped] = useState(false);
  const busy = status === "submitted" || status === "streaming";
  // The run outlives its request (on_disconnect "continue"), so Stop ends the stream and cancels the run itself.
  const stopRun = () => {
    void stop();
    setStopped(true);
    void cancelActiveRun(apiKey, threadId);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (input.trim() === "" || busy) return;
    setStopped(false);
    void sendMessage({ text: input });
    setInput("");
  };
  return (
    <main className="page">
      <header>
        <h1>useChat · Antler</h1>
        <span className="meta">thread {threadId.slice(0, 8)}</span>
        <span className="status" data-testid="status" data-busy={busy}>
          {status}
        </span>
      </header>
      <div className="messages" aria-live="polite">
        {messages.length === 0 ? <p className="empty">Ask something to start the chat.</p> : null}
        {messages.map((message) => (
          <Message key={message.id} message={message} />
        ))}
        {stopped && !busy ? (
          <p className="note" data-testid="stopped">
            Stopped: the run was cancelled.
          </p>
        ) : null}
      </div>
      {error ? <p className="error">{error.message}</p> : null}
      <form className="composer" onSubmit={submit}>
        <input type="text" aria-label="Message" placeholder="Message" value={input} onChange={(e) => setInput(e.target.value)} />
        <button type="submit" disabled={busy || input.trim() === ""}>
          Send
        </button>
        <button type="button" className="secondary" onClick={stopRun} disabled={!busy}>
          Stop
        </button>
      </form>
    </main>
  );
}

/** `DELETE /ai-sdk/chat/{id}/stream`: cancels the chat's active run (204 when none is left to stop). */
async function cancelActiveRun(apiKey: string, threadId: string): Promise<void> {
  await fetch(`${gatewayUrl()}/ai-sdk/chat/${encodeURIComponent(threadId)}/stream`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${apiKey}` },
  }).catch(() => undefined);
}

function Message({ message }: { message: UIMessage }) {
  const metadata = (message.metadata ?? {}) as RunMetadata;
  return (
    <article className={`message ${message.role}`} data-role={message.role} data-run-id={metadata.run_id}>
      <span className="role">
        {message.role === "user" ? "You" : "Assistant"}
        {metadata.stop_reason ? ` · ${metadata.stop_reason}` : ""}
      </span>
      {message.parts.map((part, i) => {
        const key = `${message.id}-${i}`;
        if (part.type === "text") return <span key={key}>{part.text}</span>;
        if (isToolUIPart(part)) {
          const output = part.state === "output-available" ? part.output : part.state === "output-error" ? part.errorText : undefined;
          return <ToolCard key={key} name={getToolName(part)} state={part.state} input={part.input} output={output} />;
        }
        return null;
      })}
    </article>
  );
}

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
