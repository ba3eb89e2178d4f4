// A small Markdown renderer that builds React elements, never HTML strings: whatever an artifact contains, raw
// HTML shows as text and links work only for http(s) and in-page anchors, so the output is sanitized by
// construction. Covers what agents write: headings, paragraphs, lists, fenced code, quotes, tables, emphasis.
import type { ReactNode } from "react";
import { highlight, languageOf } from "./highlight";

const SAFE_LINK = /^(https?:\/\/|#)/i;

function inline(text: string, key: string): ReactNode[] {
  const out: ReactNode[] = [];
  const pattern = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]+\]\([^)\s]+\))/g;
  let last = 0;
  let n = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const token = m[0];
    const k = `${key}-${n++}`;
    if (m[1]) out.push(<code key={k}>{token.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong key={k}>{inline(token.slice(2, -2), k)}</strong>);
    else if (m[3]) out.push(<em key={k}>{inline(token.slice(1, -1), k)}</em>);
    else {
      const close = token.indexOf("](");
      const label = token.slice(1, close);
      const href = token.slice(close + 2, -1);
      out.push(
        SAFE_LINK.test(href) ? (
          <a key={k} href={href} rel="noopener noreferrer" target="_blank">
            {label}
          </a>
        ) : (
          <span key={k}>{label}</span>
        ),
      );
    }
    last = m.index + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((c) => c.trim());

export function Markdown({ text }: { text: string }): ReactNode {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks: ReactNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const key = `b${i}`;
    const fence = /^```(\S*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^```/.test(lines[i] ?? "")) body.push(lines[i++] ?? "");
      i++;
      blocks.push(
        <pre key={key} className="code">
          <code data-lang={fence[1] || undefined}>{highlight(body.join("\n"), languageOf(fence[1]))}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = Math.min((heading[1] ?? "#").length + 1, 6);
      const Tag = `h${level}` as "h2";
      blocks.push(<Tag key={key}>{inline(heading[2] ?? "", key)}</Tag>);
      i++;
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1] ?? "")) {
      const head = cells(line);
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i] ?? "")) rows.push(cells(lines[i++] ?? ""));
      blocks.push(
        <table key={key}>
          <thead>
            <tr>
              {head.map((c, j) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's parts never reorder
                <th key={`${key}h${j}`} scope="col">
                  {inline(c, `${key}h${j}`)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, ri) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's parts never reorder
              <tr key={`${key}r${ri}`}>
                {r.map((c, j) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's parts never reorder
                  <td key={`${key}r${ri}c${j}`}>{inline(c, `${key}r${ri}c${j}`)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>,
      );
      continue;
    }
    const bullet = /^\s*([-*+]|\d+[.)])\s+/;
    if (bullet.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const entries: string[] = [];
      while (i < lines.length && bullet.test(lines[i] ?? "")) entries.push((lines[i++] ?? "").replace(bullet, ""));
      const List = ordered ? "ol" : "ul";
      blocks.push(
        <List key={key}>
          {entries.map((e, j) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's parts never reorder
            <li key={`${key}-${j}`}>
              {inline(
                e.replace(/^\[( |x)\]\s*/i, (_, x: string) => (x === " " ? "☐ " : "☑ ")),
                `${key}-${j}`,
              )}
            </li>
          ))}
        </List>,
      );
      continue;
    }
    if (/^>\s?/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^>\s?/.test(lines[i] ?? "")) quoted.push((lines[i++] ?? "").replace(/^>\s?/, ""));
      blocks.push(<blockquote key={key}>{inline(quoted.join(" "), key)}</blockquote>);
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && (lines[i] ?? "").trim() !== "" && !/^(#{1,6}\s|```|>\s?|\s*([-*+]|\d+[.)])\s+)/.test(lines[i] ?? ""))
      para.push(lines[i++] ?? "");
    blocks.push(<p key={key}>{inline(para.join(" "), key)}</p>);
  }
  return <div className="markdown">{blocks}</div>;
}
