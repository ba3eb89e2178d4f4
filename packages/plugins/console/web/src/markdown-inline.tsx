// Inline Markdown (code, emphasis, links, images, math) as React elements. Images load only from the thread's own
// artifacts: any other image URL becomes a link (http/https) or its alt text, so Markdown an agent writes can never
// make the browser fetch from another host. Math is typeset by KaTeX, loaded on first use (not on the first screen).
import { createContext, type ReactNode, useEffect, useState } from "react";
import { useT } from "./i18n";

/** What Markdown needs to know about where it is shown: the thread whose artifacts images may come from. */
export interface MarkdownPlace {
  threadId: string;
  artifacts: readonly string[];
  /** The folder of the document being shown (an artifact's), for image paths relative to it. */
  folder?: string;
}

export const MarkdownPlaceContext = createContext<MarkdownPlace | null>(null);

const SAFE_LINK = /^(https?:\/\/|#)/i;

/** The artifact URL the API serves a thread's file at. */
export function artifactUrl(threadId: string, path: string): string {
  return `/api/threads/${encodeURIComponent(threadId)}/artifacts${path.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * The thread artifact an image source names, or null: its virtual path (`/mnt/user-data/outputs/chart.png`), or a
 * path relative to the document's folder or to an artifact's folder (`chart.png`, `./img/chart.png`).
 */
export function artifactImage(src: string, place: MarkdownPlace | null): string | null {
  if (!place || /^[a-z][a-z0-9+.-]*:|^\/\//i.test(src)) return null;
  const clean = src.replace(/^\.\//, "");
  if (src.startsWith("/")) return place.artifacts.includes(src) ? src : null;
  if (clean.split("/").includes("..")) return null;
  if (place.folder && place.artifacts.includes(`${place.folder}/${clean}`)) return `${place.folder}/${clean}`;
  return place.artifacts.find((a) => a.endsWith(`/${clean}`)) ?? null;
}

function MarkdownImage({ alt, src, place }: { alt: string; src: string; place: MarkdownPlace | null }): ReactNode {
  const t = useT();
  const path = artifactImage(src, place);
  if (path && place) return <img className="md-image" src={artifactUrl(place.threadId, path)} alt={alt} loading="lazy" />;
  const label = alt || src;
  // Not one of the thread's files: never fetched. A web address stays reachable as a link the reader may follow.
  return SAFE_LINK.test(src) && !src.startsWith("#") ? (
    <a className="md-image-link" href={src} rel="noopener noreferrer" target="_blank" title={t("md.imageOther")}>
      {t("md.image", { label })}
    </a>
  ) : (
    <span className="md-image-alt" title={t("md.imageNotArtifact")}>
      {t("md.image", { label })}
    </span>
  );
}

/** TeX typeset as MathML by KaTeX (loaded on demand); the source shows until it is ready or when it does not parse. */
export function MathTex({ tex, display }: { tex: string; display: boolean }): ReactNode {
  const [html, setHtml] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    import("./math").then((m) => live && setHtml(m.texToMathml(tex, display))).catch(() => undefined);
    return () => {
      live = false;
    };
  }, [tex, display]);
  const Tag = display ? "div" : "span";
  if (html === null) {
    return (
      <Tag className={display ? "math math-display math-pending" : "math math-pending"}>
        <code>{display ? `$$${tex}$$` : `$${tex}$`}</code>
      </Tag>
    );
  }
  // KaTeX's own output (trust off, so no \href or \url, no HTML from the input): MathML elements only.
  // biome-ignore lint/security/noDangerouslySetInnerHtml: KaTeX escapes the TeX it is given; see texToMathml
  return <Tag className={display ? "math math-display" : "math"} data-tex={tex} dangerouslySetInnerHTML={{ __html: html }} />;
}

// Code, strong, emphasis, image, link, inline math ($x$: no space inside the dollars, no digit right after the last).
const INLINE =
  /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(!\[[^\]]*\]\([^)\s]+\))|(\[[^\]]+\]\([^)\s]+\))|(\$[^$\s](?:[^$\n]*[^$\s])?\$(?!\d))/g;

export function inline(text: string, key: string, place: MarkdownPlace | null): ReactNode[] {
  const out: ReactNode[] = [];
  const pattern = new RegExp(INLINE.source, "g");
  let last = 0;
  let n = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const token = m[0];
    const k = `${key}-${n++}`;
    if (m[1]) out.push(<code key={k}>{token.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong key={k}>{inline(token.slice(2, -2), k, place)}</strong>);
    else if (m[3]) out.push(<em key={k}>{inline(token.slice(1, -1), k, place)}</em>);
    else if (m[4]) {
      const close = token.indexOf("](");
      out.push(<MarkdownImage key={k} alt={token.slice(2, close)} src={token.slice(close + 2, -1)} place={place} />);
    } else if (m[5]) {
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
    } else out.push(<MathTex key={k} tex={token.slice(1, -1)} display={false} />);
    last = m.index + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
