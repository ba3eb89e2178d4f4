import { lazy, type ReactNode, Suspense, useEffect, useState } from "react";
import { useT } from "./i18n";

/** How the artifacts panel shows files: `artifacts` of the console's config, from `/api/console/status`. */
export interface ArtifactSettings {
  /** Scripts run in HTML artifacts (still in a sandbox with an opaque origin). */
  html_scripts: boolean;
  /** Rows of a CSV artifact drawn as a table. */
  csv_max_rows: number;
}

const DEFAULT_SETTINGS: ArtifactSettings = { html_scripts: false, csv_max_rows: 1000 };

// The viewers (CSV table, HTML frame, PDF, Markdown, code) load when a file is first opened, not with the page.
const ArtifactViewer = lazy(() => import("./artifact-viewers").then((m) => ({ default: m.ArtifactViewer })));

/**
 * Files the run presented: pick one to see it (Markdown rendered, CSV as a sortable table, HTML in a sandboxed
 * frame, images, PDFs in the browser's viewer, code highlighted) in place or full screen, or download it.
 */
export function Artifacts({
  threadId,
  paths,
  settings = DEFAULT_SETTINGS,
}: {
  threadId: string;
  paths: readonly string[];
  settings?: ArtifactSettings | undefined;
}): ReactNode {
  const t = useT();
  const [open, setOpen] = useState<string | null>(null);
  const [full, setFull] = useState(false);

  useEffect(() => {
    if (!full) return;
    // Captured first, so Escape leaves full screen only, and a phone's details drawer stays open under it.
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      e.stopPropagation();
      setFull(false);
    };
    addEventListener("keydown", onKey, true);
    return () => removeEventListener("keydown", onKey, true);
  }, [full]);

  return (
    <section className="artifacts" aria-label={t("artifacts.title")}>
      <h2>{t("artifacts.title")}</h2>
      {paths.length === 0 ? <p className="muted">{t("artifacts.none")}</p> : null}
      <ul>
        {paths.map((p) => (
          <li key={p}>
            <button
              type="button"
              className="link"
              aria-pressed={open === p}
              onClick={() => {
                setOpen(open === p ? null : p);
                if (open === p) setFull(false);
              }}
            >
              {p.split("/").pop()}
            </button>
          </li>
        ))}
      </ul>
      {open ? (
        <article className={`artifact-view${full ? " artifact-full" : ""}`} aria-label={t("artifacts.item", { path: open })}>
          <Suspense fallback={<p className="muted">{t("artifacts.loadingViewer")}</p>}>
            <ArtifactViewer
              key={`${threadId}:${open}`}
              threadId={threadId}
              path={open}
              artifacts={paths}
              settings={settings}
              full={full}
              onFull={setFull}
            />
          </Suspense>
        </article>
      ) : null}
    </section>
  );
}
