import { type FormEvent, useState } from "react";
import { storeApiKey } from "./session.js";

/** Asks for a gateway API key once per browser session. */
export function SignIn({ title, onKey }: { title: string; onKey: (key: string) => void }) {
  const [key, setKey] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (key.trim() === "") return;
    storeApiKey(key.trim());
    onKey(key.trim());
  };
  return (
    <main className="page">
      <form className="sign-in" onSubmit={submit}>
        <h1>{title}</h1>
        <label htmlFor="api-key">Gateway API key</label>
        <input id="api-key" type="password" value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" />
        <button type="submit">Continue</button>
      </form>
    </main>
  );
}

/** A tool call as a card: its name, where it is, what it was given and what came back. */
export function ToolCard({ name, state, input, output }: { name: string; state: string; input: unknown; output?: unknown }) {
  return (
    <section className="tool" data-testid="tool-card" data-tool={name} data-state={state} aria-label={`Tool call ${name}`}>
      <div className="tool-head">
        <span className="tool-name">{name}</span>
        <span className="tool-state">{state}</span>
      </div>
      {input === undefined ? null : (
        <>
          <span className="tool-label">input</span>
          <pre>{JSON.stringify(input, null, 2)}</pre>
        </>
      )}
      {output === undefined ? null : (
        <>
          <span className="tool-label">output</span>
          <pre data-testid="tool-output">{typeof output === "string" ? output : JSON.stringify(output, null, 2)}</pre>
        </>
      )}
    </section>
  );
}
