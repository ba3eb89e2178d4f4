import { type ReactNode, useEffect, useState } from "react";
import { apiRaw } from "./api";
import { highlight, languageOf } from "./highlight";
import { Markdown } from "./markdown";

const IMAGE = /\.(png|jpe?g|gif|webp)$/i;
const MARKDOWN = /\.(md|markdown)$/i;

function artifactUrl(threadId: string, path: string): string {
  return `/threads/${encodeURIComponent(threadId)}/artifacts${path.split("/").map(encodeURIComponent).join("/")}`;
}

type Loaded =
  | { kind: "markdown" | "text"; text: string; url: string }
  | { kind: "image"; url: string }
  | { kind: "binary"; url: string; size: number };

/** Files the run presented: pick one to see it (Markdown rendered, images, text and code as text) or download it. */
export function Artifacts({ threadId, paths }: { threadId: string; paths: readonly string[] }): ReactNode {
  const [open, setOpen] = useState<string | null>(null);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!open) return;
    let url = "";
    let live = true;
    setLoaded(null);
    setError(null);
    apiRaw(artifactUrl(threadId, open))
      .then(async (response) => {
        const blob = await response.blob();
        url = URL.createObjectURL(blob);
        if (!live) return;
        if (IMAGE.test(open)) setLoaded({ kind: "image", url });
        else if (MARKDOWN.test(open)) setLoaded({ kind: "markdown", text: await blob.text(), url });
        else if (/^(text\/|application\/(json|javascript|x-ndjson|xml|yaml))/.test(blob.type) || blob.size < 256 * 1024)
          setLoaded({ kind: "text", text: await blob.text(), url });
        else setLoaded({ kind: "binary", url, size: blob.size });
      })
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [threadId, open]);

  return (
    <section className="artifacts" aria-label="Artifacts">
      <h2>Artifacts</h2>
      {paths.length === 0 ? <p className="muted">The agent has not presented any files yet.</p> : null}
      <ul>
        {paths.map((p) => (
          <li key={p}>
            <button type="button" className="link" aria-pressed={open === p} onClick={() => setOpen(open === p ? null : p)}>
              {p.split("/").pop()}
            </button>
          </li>
        ))}
      </ul>
      {error ? <p role="alert">{error}</p> : null}
      {open && loaded ? (
        <article className="artifact-view" aria-label={`Artifact ${open}`}>
          <header>
            <strong>{open}</strong>{" "}
            <a href={loaded.url} download={open.split("/").pop()}>
              Download
            </a>
          </header>
          {loaded.kind === "markdown" ? <Markdown text={loaded.text} /> : null}
          {loaded.kind === "image" ? <img src={loaded.url} alt={open.split("/").pop() ?? "artifact"} /> : null}
          {loaded.kind === "text" ? (
            <pre className="code">
              <code data-lang={languageOf(open)}>{highlight(loaded.text, languageOf(open))}</code>
            </pre>
          ) : null}
          {loaded.kind === "binary" ? <p>A binary file ({loaded.size} bytes): download it to open.</p> : null}
        </article>
      ) : null}
    </section>
  );
}
