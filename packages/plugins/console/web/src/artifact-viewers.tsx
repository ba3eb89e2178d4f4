// The artifact viewers, loaded when a file is first opened. Each kind of file is shown the safest way that still
// shows it: HTML only inside a sandboxed frame with an opaque origin, everything else as React elements or as a
// blob the browser draws itself (images, PDFs).
import { type ReactNode, useEffect, useMemo, useState } from "react";
import { apiRaw } from "./api";
import type { ArtifactSettings } from "./artifacts";
import { highlight, languageOf } from "./highlight";
import { useI18n, useT } from "./i18n";
import { Markdown } from "./markdown";
import { artifactUrl } from "./markdown-inline";

const IMAGE = /\.(png|jpe?g|gif|webp|svg|avif|bmp)$/i;
const MARKDOWN = /\.(md|markdown)$/i;
const CSV = /\.(csv|tsv)$/i;
const HTML = /\.html?$/i;
const PDF = /\.pdf$/i;

type Loaded =
  | { kind: "markdown" | "text" | "csv"; text: string; url: string }
  | { kind: "image" | "pdf"; url: string }
  | { kind: "binary"; url: string; size: number };

const apiPath = (threadId: string, path: string) => artifactUrl(threadId, path).slice("/api".length);

/** One artifact: a header (name, full screen, download) and the viewer for its kind. */
export function ArtifactViewer({
  threadId,
  path,
  artifacts,
  settings,
  full,
  onFull,
}: {
  threadId: string;
  path: string;
  artifacts: readonly string[];
  settings: ArtifactSettings;
  full: boolean;
  onFull(full: boolean): void;
}): ReactNode {
  const name = path.split("/").pop() ?? "artifact";
  const html = HTML.test(path);
  const { t, locale } = useI18n();
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (html) return; // framed from its own URL, never read into the page
    let url = "";
    let live = true;
    apiRaw(apiPath(threadId, path))
      .then(async (response) => {
        const blob = await response.blob();
        url = URL.createObjectURL(blob);
        if (!live) return;
        if (IMAGE.test(path)) setLoaded({ kind: "image", url });
        else if (PDF.test(path)) setLoaded({ kind: "pdf", url });
        else if (MARKDOWN.test(path)) setLoaded({ kind: "markdown", text: await blob.text(), url });
        else if (CSV.test(path)) setLoaded({ kind: "csv", text: await blob.text(), url });
        else if (/^(text\/|application\/(json|javascript|x-ndjson|xml|yaml))/.test(blob.type) || blob.size < 256 * 1024)
          setLoaded({ kind: "text", text: await blob.text(), url });
        else setLoaded({ kind: "binary", url, size: blob.size });
      })
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [threadId, path, html]);

  const download = loaded?.url ?? `${artifactUrl(threadId, path)}?download`;
  return (
    <>
      <header>
        <strong className="artifact-name">{path}</strong>
        <span className="artifact-actions">
          <button type="button" className="link" aria-pressed={full} onClick={() => onFull(!full)}>
            {full ? t("artifacts.exitFull") : t("artifacts.full")}
          </button>
          <a href={download} download={name}>
            {t("artifacts.download")}
          </a>
        </span>
      </header>
      {error ? <p role="alert">{error}</p> : null}
      {html ? <HtmlFrame threadId={threadId} path={path} scripts={settings.html_scripts} /> : null}
      {loaded?.kind === "markdown" ? (
        <Markdown text={loaded.text} place={{ threadId, artifacts, folder: path.slice(0, path.lastIndexOf("/")) }} />
      ) : null}
      {loaded?.kind === "csv" ? <CsvTable text={loaded.text} tabs={/\.tsv$/i.test(path)} maxRows={settings.csv_max_rows} /> : null}
      {loaded?.kind === "image" ? <img src={loaded.url} alt={name} /> : null}
      {loaded?.kind === "pdf" ? (
        <iframe className="artifact-frame artifact-pdf" src={loaded.url} title={t("artifacts.pdf", { name })} />
      ) : null}
      {loaded?.kind === "text" ? (
        <pre className="code">
          <code data-lang={languageOf(path)}>{highlight(loaded.text, languageOf(path))}</code>
        </pre>
      ) : null}
      {loaded?.kind === "binary" ? <p>{t("artifacts.binary", { size: loaded.size.toLocaleString(locale) })}</p> : null}
    </>
  );
}

/**
 * An HTML artifact in a frame that is sandboxed twice: by the `sandbox` attribute here (never
 * `allow-same-origin`, so the page gets an opaque origin: no cookies, no API, no reach into the console) and by
 * the route's own CSP. Scripts run only when the operator set `artifacts.html_scripts: true`.
 */
function HtmlFrame({ threadId, path, scripts }: { threadId: string; path: string; scripts: boolean }): ReactNode {
  const t = useT();
  const src = `/api/console/artifact-html/${encodeURIComponent(threadId)}${path.split("/").map(encodeURIComponent).join("/")}`;
  return (
    <>
      <p className="muted artifact-note">{t(scripts ? "artifacts.scriptsOn" : "artifacts.scriptsOff")}</p>
      <iframe
        className="artifact-frame"
        src={src}
        sandbox={scripts ? "allow-scripts" : ""}
        title={t("artifacts.html", { name: path.split("/").pop() ?? path })}
      />
    </>
  );
}

/** RFC 4180 CSV (quoted fields, doubled quotes, line breaks inside quotes), or tab-separated values. */
export function parseDelimited(text: string, separator: "," | "\t"): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === separator) {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

type Sort = { column: number; direction: "ascending" | "descending" } | null;

const NUMBER = /^\s*-?\d+(?:[.,]\d+)?\s*$/;

function compareCells(a: string, b: string): number {
  if (NUMBER.test(a) && NUMBER.test(b)) return Number(a.replace(",", ".")) - Number(b.replace(",", "."));
  return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
}

/** The CSV's first `maxRows` rows as a table; each column header sorts by that column (numbers as numbers). */
function CsvTable({ text, tabs, maxRows }: { text: string; tabs: boolean; maxRows: number }): ReactNode {
  const { t, locale } = useI18n();
  const all = useMemo(() => parseDelimited(text, tabs ? "\t" : ","), [text, tabs]);
  const [sort, setSort] = useState<Sort>(null);
  const head = all[0] ?? [];
  const body = all.slice(1);
  const shown = useMemo(() => {
    const rows = body.slice(0, maxRows);
    if (!sort) return rows;
    const sign = sort.direction === "ascending" ? 1 : -1;
    return [...rows].sort((x, y) => sign * compareCells(x[sort.column] ?? "", y[sort.column] ?? ""));
  }, [body, maxRows, sort]);
  if (head.length === 0) return <p className="muted">{t("csv.empty")}</p>;
  return (
    <>
      <p className="muted csv-count" data-testid="csv-count">
        {body.length > maxRows
          ? t("csv.firstRows", { shown: maxRows.toLocaleString(locale), total: body.length.toLocaleString(locale) })
          : t(body.length === 1 ? "csv.rowOne" : "csv.rows", { count: body.length.toLocaleString(locale) })}
        {sort ? t("csv.sortedBy", { column: head[sort.column] ?? "", direction: t(`csv.${sort.direction}`) }) : t("csv.sortHint")}
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable) */}
      <div className="table-wrap csv-table" tabIndex={0}>
        <table>
          <thead>
            <tr>
              {head.map((h, j) => (
                <th
                  // biome-ignore lint/suspicious/noArrayIndexKey: columns never reorder
                  key={j}
                  scope="col"
                  aria-sort={sort?.column === j ? sort.direction : undefined}
                >
                  <button
                    type="button"
                    className="sort"
                    onClick={() =>
                      setSort(
                        sort?.column === j && sort.direction === "ascending"
                          ? { column: j, direction: "descending" }
                          : { column: j, direction: "ascending" },
                      )
                    }
                  >
                    {h || t("csv.column", { n: j + 1 })}
                    <span aria-hidden="true">{sort?.column === j ? (sort.direction === "ascending" ? " ▲" : " ▼") : ""}</span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((r, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows are positional in a read-only table
              <tr key={i}>
                {head.map((_, j) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: columns never reorder
                  <td key={j}>{r[j] ?? ""}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
