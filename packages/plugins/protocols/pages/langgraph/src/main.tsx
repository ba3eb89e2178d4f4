// A small chat page on `useStream` from `@langchain/langgraph-sdk/react`, talking to Antler's LangGraph-compatible
// API (`<gateway>/langgraph`): the thread id lives in the URL, messages stream in (stream modes `values` and
// `messages-tuple`), tool calls show as cards, an interrupt (ask_clarification) gets an answer form that resumes
// the run with `command: { resume }`, Stop cancels the run, and `reconnectOnMount` rejoins a run after a reload.
import type { Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { type FormEvent, StrictMode, useState } from "react";
import { createRoot } from "react-dom/client";
import { SignIn, ToolCard } from "../../shared/components.js";
import { gatewayUrl, putThreadIdInUrl, storedApiKey, threadIdFromUrl } from "../../shared/session.js";
import "../../shared/page.css";

const params = new URL(location.href).searchParams;
/** The assistant to run: `?assistant=` or the lead agent. */
const assistantId = params.get("assistant") ?? "lead_agent";
/** The LangGraph API: `?api=` (any LangGraph-compatible server), or the gateway's `/langgraph` prefix. */
const apiUrl = params.get("api") ?? `${gatewayUrl()}/langgraph`;

function App() {
  const [apiKey, setApiKey] = useState(storedApiKey);
  if (apiKey === null) return <SignIn title="Antler · useStream" onKey={setApiKey} />;
  return <Chat apiKey={apiKey} />;
}

function Chat({ apiKey }: { apiKey: string }) {
  const [threadId, setThreadId] = useState(threadIdFromUrl);
  const [runId, setRunId] = useState<string | null>(null);
  const stream = useStream({
    apiUrl,
    apiKey,
    assistantId,
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      putThreadIdInUrl(id);
    },
    // The run id is kept in session storage while a run streams, so a reload joins it again.
    reconnectOnMount: true,
    onCreated: (run) => setRunId(run.run_id),
  });
  const [input, setInput] = useState("");
  const [stopped, setStopped] = useState(false);
  const busy = stream.isLoading;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (input.trim() === "" || busy) return;
    setStopped(false);
    void stream.submit({ messages: [{ type: "human", content: input }] });
    setInput("");
  };
  const messages = stream.messages.filter((m) => m.type === "human" || m.type === "ai");
  // Each tool call's card shows its result: the tool message answering it, once it is in.
  const results = new Map(stream.messages.flatMap((m) => (m.type === "tool" ? [[m.tool_call_id, m] as const] : [])));
  // A breakpoint (an interrupt with no value) asks nothing a form could answer.
  const interrupt = busy || stream.interrupt?.value === undefined ? undefined : stream.interrupt;
  const rejoinedRun = threadId === null ? null : sessionStorage.getItem(`lg:stream:${threadId}`);
  return (
    <main className="page">
      <header>
        <h1>useStream · Antler</h1>
        <span className="meta">{threadId === null ? "new thread" : `thread ${threadId.slice(0, 8)}`}</span>
        <span className="status" data-testid="status" data-busy={busy} data-run-id={runId ?? rejoinedRun ?? undefined}>
          {busy ? "running" : interrupt ? "waiting for you" : "idle"}
        </span>
      </header>
      <div className="messages" aria-live="polite">
        {messages.length === 0 ? <p className="empty">Ask something to start a thread.</p> : null}
        {messages.map((message, i) => (
          <article key={message.id ?? i} className={`message ${message.type === "human" ? "user" : "assistant"}`} data-role={message.type}>
            <span className="role">{message.type === "human" ? "You" : "Assistant"}</span>
            <span>{textOf(message)}</span>
            {message.type === "ai"
              ? (message.tool_calls ?? []).map((call, j) => {
                  const result = call.id === undefined ? undefined : results.get(call.id);
                  const state = result === undefined ? "pending" : result.status === "error" ? "error" : "completed";
                  return (
                    <ToolCard
                      key={call.id ?? j}
                      name={call.name}
                      state={state}
                      input={call.args}
                      output={result === undefined ? undefined : textOf(result)}
                    />
                  );
                })
              : null}
          </article>
        ))}
        {stopped && !busy ? (
          <p className="note" data-testid="stopped">
            Stopped: the run was cancelled.
          </p>
        ) : null}
        {interrupt ? (
          <InterruptForm value={interrupt.value} onAnswer={(answer) => void stream.submit(null, { command: { resume: answer } })} />
        ) : null}
      </div>
      {stream.error ? <p className="error">{errorText(stream.error)}</p> : null}
      <form className="composer" onSubmit={submit}>
        <input type="text" aria-label="Message" placeholder="Message" value={input} onChange={(e) => setInput(e.target.value)} />
        <button type="submit" disabled={busy || input.trim() === ""}>
          Send
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setStopped(true);
            void stream.stop();
          }}
          disabled={!busy}
        >
          Stop
        </button>
      </form>
    </main>
  );
}

/** What the run asks (an ask_clarification question and its options, or any other interrupt value) and the answer. */
function InterruptForm({ value, onAnswer }: { value: unknown; onAnswer: (answer: string) => void }) {
  const [answer, setAnswer] = useState("");
  const asked = typeof value === "object" && value !== null ? (value as { question?: unknown; options?: unknown; context?: unknown }) : {};
  const question = typeof asked.question === "string" ? asked.question : typeof value === "string" ? value : JSON.stringify(value);
  const options = Array.isArray(asked.options) ? asked.options.filter((o): o is string => typeof o === "string") : [];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (answer.trim() !== "") onAnswer(answer.trim());
  };
  return (
    <section className="interrupt" data-testid="interrupt" aria-label="The assistant asks">
      <p>{question}</p>
      {typeof asked.context === "string" ? <span className="context">{asked.context}</span> : null}
      {options.length > 0 ? (
        <div className="options">
          {options.map((option) => (
            <button key={option} type="button" className="secondary" onClick={() => onAnswer(option)}>
              {option}
            </button>
          ))}
        </div>
      ) : null}
      <form className="composer" onSubmit={submit} style={{ padding: 0, border: 0 }}>
        <input type="text" aria-label="Answer" placeholder="Your answer" value={answer} onChange={(e) => setAnswer(e.target.value)} />
        <button type="submit" disabled={answer.trim() === ""}>
          Answer
        </button>
      </form>
    </section>
  );
}

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((block) => ("text" in block && typeof block.text === "string" ? block.text : "")).join("");
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);
}

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
