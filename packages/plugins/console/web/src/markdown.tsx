// A small Markdown renderer that builds React elements, never HTML strings: whatever an artifact contains, raw
// HTML shows as text and links work only for http(s) and in-page anchors, so the output is sanitized by
// construction. Covers what agents write: headings, paragraphs, nested lists, fenced code (language label and a
// copy button), quotes, tables with column alignment, emphasis, images from the thread's artifacts, and TeX math.
import { type ReactNode, useContext } from "react";
import { highlight, languageOf } from "./highlight";
import { useT } from "./i18n";
import { inline, type MarkdownPlace, MarkdownPlaceContext, MathTex } from "./markdown-inline";
import { CopyButton } from "./message-actions";

export { type MarkdownPlace, MarkdownPlaceContext } from "./markdown-inline";

type Align = "left" | "right" | "center" | undefined;

/** Splits a table row on the pipes that are not escaped (`\|` stays a pipe inside the cell). */
const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||(?<!\\)\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replaceAll("\\|", "|"));

function alignments(separator: string): Align[] {
  return cells(separator).map((c) => {
    const left = c.startsWith(":");
    const right = c.endsWith(":");
    return left && right ? "center" : right ? "right" : left ? "left" : undefined;
  });
}

const LIST_ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;
const indentOf = (line: string) => /^\s*/.exec(line)?.[0].length ?? 0;

/** A fenced code block with its language named and a copy button. */
function CodeBlock({ code, tag }: { code: string; tag: string }): ReactNode {
  const t = useT();
  const lang = tag || t("md.text");
  return (
    <figure className="code-block">
      <figcaption>
        <span className="code-lang">{lang}</span>
        <CopyButton text={code} label={t("md.copyCode", { lang })} />
      </figcaption>
      <pre className="code">
        <code data-lang={tag || undefined}>{highlight(code, languageOf(tag))}</code>
      </pre>
    </figure>
  );
}

function Table({
  head,
  align,
  rows,
  id,
  place,
}: {
  head: string[];
  align: Align[];
  rows: string[][];
  id: string;
  place: MarkdownPlace | null;
}) {
  return (
    // Wide tables scroll inside their own box (focusable, so a keyboard can scroll it), never the page.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable)
    <div className="table-wrap" tabIndex={0}>
      <table>
        <thead>
          <tr>
            {head.map((c, j) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's parts never reorder
              <th key={`${id}h${j}`} scope="col" style={{ textAlign: align[j] }}>
                {inline(c, `${id}h${j}`, place)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, ri) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's parts never reorder
            <tr key={`${id}r${ri}`}>
              {head.map((_, j) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's parts never reorder
                <td key={`${id}r${ri}c${j}`} style={{ textAlign: align[j] }}>
                  {inline(r[j] ?? "", `${id}r${ri}c${j}`, place)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * One list and everything nested in it. An item owns the lines after it that are indented deeper than its
 * marker (blank lines included while more indented text follows); those are dedented and rendered as blocks, so a
 * nested list, a code block or a quote inside an item all work.
 */
function parseList(lines: string[], start: number, key: string, place: MarkdownPlace | null): { node: ReactNode; next: number } {
  const first = LIST_ITEM.exec(lines[start] ?? "");
  const base = first?.[1]?.length ?? 0;
  const ordered = /\d/.test(first?.[2] ?? "");
  const items: Array<{ text: string; body: string[] }> = [];
  let i = start;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const m = LIST_ITEM.exec(line);
    if (m && (m[1]?.length ?? 0) <= base + 1 && /\d/.test(m[2] ?? "") === ordered) {
      items.push({ text: m[3] ?? "", body: [] });
      i++;
      continue;
    }
    if (m && (m[1]?.length ?? 0) <= base + 1) break; // a list of the other kind starts
    const current = items[items.length - 1];
    if (!current) break;
    if (line.trim() === "") {
      const after = lines.slice(i + 1).find((l) => l.trim() !== "");
      if (after === undefined || indentOf(after) <= base) break;
      current.body.push("");
      i++;
      continue;
    }
    if (indentOf(line) <= base) break;
    current.body.push(line);
    i++;
  }
  const List = ordered ? "ol" : "ul";
  const startAt = ordered ? Number.parseInt(first?.[2] ?? "1", 10) : undefined;
  const node = (
    <List key={key} start={startAt !== undefined && startAt !== 1 ? startAt : undefined}>
      {items.map((item, j) => {
        const k = `${key}-${j}`;
        const cut = Math.min(...item.body.filter((l) => l.trim() !== "").map(indentOf));
        const body = item.body.map((l) => l.slice(Number.isFinite(cut) ? cut : 0));
        return (
          <li key={k}>
            {inline(
              item.text.replace(/^\[( |x)\]\s*/i, (_, x: string) => (x === " " ? "☐ " : "☑ ")),
              k,
              place,
            )}
            {body.length > 0 ? blocks(body, `${k}b`, place) : null}
          </li>
        );
      })}
    </List>
  );
  return { node, next: i };
}

const BLOCK_START = /^(#{1,6}\s|```|>\s?|\s*\$\$|\s*([-*+]|\d+[.)])\s+)/;

function blocks(lines: string[], prefix: string, place: MarkdownPlace | null): ReactNode[] {
  const out: ReactNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const key = `${prefix}${i}`;
    const fence = /^\s*```\s*([^\s`]*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```/.test(lines[i] ?? "")) body.push(lines[i++] ?? "");
      i++;
      out.push(<CodeBlock key={key} code={body.join("\n")} tag={fence[1] ?? ""} />);
      continue;
    }
    // A `$$` block needs its closing `$$`: a lone one (or one still streaming in) stays text, never swallowing the rest.
    if (/^\s*\$\$/.test(line) && (/^\s*\$\$.+\$\$\s*$/.test(line) || lines.slice(i + 1).some((l) => /\$\$\s*$/.test(l)))) {
      const oneLine = /^\s*\$\$(.+)\$\$\s*$/.exec(line);
      let tex: string;
      if (oneLine) {
        tex = oneLine[1] ?? "";
        i++;
      } else {
        const body: string[] = [line.replace(/^\s*\$\$/, "")];
        i++;
        while (i < lines.length && !/\$\$\s*$/.test(lines[i] ?? "")) body.push(lines[i++] ?? "");
        body.push((lines[i] ?? "").replace(/\$\$\s*$/, ""));
        i++;
        tex = body.join("\n");
      }
      out.push(<MathTex key={key} tex={tex.trim()} display />);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = Math.min((heading[1] ?? "#").length + 1, 6);
      const Tag = `h${level}` as "h2";
      out.push(<Tag key={key}>{inline(heading[2] ?? "", key, place)}</Tag>);
      i++;
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1] ?? "")) {
      const head = cells(line);
      const align = alignments(lines[i + 1] ?? "");
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i] ?? "")) rows.push(cells(lines[i++] ?? ""));
      out.push(<Table key={key} id={key} head={head} align={align} rows={rows} place={place} />);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const { node, next } = parseList(lines, i, key, place);
      out.push(node);
      i = next;
      continue;
    }
    if (/^>\s?/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^>\s?/.test(lines[i] ?? "")) quoted.push((lines[i++] ?? "").replace(/^>\s?/, ""));
      out.push(<blockquote key={key}>{inline(quoted.join(" "), key, place)}</blockquote>);
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && (lines[i] ?? "").trim() !== "" && !BLOCK_START.test(lines[i] ?? "")) para.push(lines[i++] ?? "");
    if (para.length === 0) para.push(lines[i++] ?? "");
    out.push(<p key={key}>{inline(para.map((l) => l.trim()).join(" "), key, place)}</p>);
  }
  return out;
}

/** Markdown as React elements; images resolve against the thread of the nearest `MarkdownPlaceContext`. */
export function Markdown({ text, place }: { text: string; place?: MarkdownPlace }): ReactNode {
  const fromContext = useContext(MarkdownPlaceContext);
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  return <div className="markdown">{blocks(lines, "b", place ?? fromContext)}</div>;
}
