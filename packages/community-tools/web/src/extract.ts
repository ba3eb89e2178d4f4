import { createRequire } from "node:module";
import type { Readability as ReadabilityClass } from "@mozilla/readability";
import type { parseHTML as ParseHTML } from "linkedom";
import { type DomNode, domToMarkdown } from "./markdown.js";

// linkedom and Readability (a few hundred modules) load on the first extraction, not with the package, so that
// loading the plugin (`antler config check`, `antler plugins list`) stays light. `require` keeps this synchronous;
// both ship CommonJS builds.
let domLibraries: { parseHTML: typeof ParseHTML; Readability: typeof ReadabilityClass } | undefined;
function loadDomLibraries(): NonNullable<typeof domLibraries> {
  const require = createRequire(import.meta.url);
  domLibraries ??= { parseHTML: require("linkedom").parseHTML, Readability: require("@mozilla/readability").Readability };
  return domLibraries;
}

export interface ExtractedPage {
  readonly title: string | undefined;
  /** The readable part of the page, as Markdown. */
  readonly markdown: string;
  /** Whether Readability found an article; false means the whole body was converted. */
  readonly readable: boolean;
}

interface LinkedomDocument extends DomNode {
  readonly title?: string;
  readonly body: DomNode | null;
  readonly documentElement: DomNode | null;
}

const STRIP_BEFORE_PARSE =
  /<script\b[^>]*>[\s\S]*?<\/script\s*>|<style\b[^>]*>[\s\S]*?<\/style\s*>|<svg\b[^>]*>[\s\S]*?<\/svg\s*>|<!--[\s\S]*?-->/gi;

/**
 * Extracts the readable text of an HTML page as Markdown: Readability (over a linkedom DOM, no browser)
 * picks the article, then it is converted to Markdown with links resolved against `url`. Pages Readability
 * cannot make sense of fall back to the whole body, minus scripts, styles and forms.
 */
export function extractReadable(html: string, url?: string): ExtractedPage {
  // Scripts, styles, inline SVG and comments are often most of a page's bytes and never readable text; dropping
  // them before parsing keeps the (synchronous) DOM work proportional to the content.
  const lean = html.replace(STRIP_BEFORE_PARSE, "");
  const { parseHTML, Readability } = loadDomLibraries();
  const parse = () => (parseHTML(lean) as unknown as { document: LinkedomDocument }).document;
  const forReader = parse();
  const fallbackTitle = (forReader.title ?? "").trim() || undefined;
  let article: { title?: string | null; content?: DomNode | null } | null = null;
  try {
    const reader = new Readability<DomNode>(forReader as never, { serializer: (node) => node as unknown as DomNode });
    article = reader.parse();
  } catch {
    article = null;
  }
  if (article?.content) {
    const markdown = domToMarkdown(article.content, { baseUrl: url });
    if (markdown.length > 0) return { title: article.title?.trim() || fallbackTitle, markdown, readable: true };
  }
  // Readability mutates the document it reads, so the fallback converts a fresh parse.
  const document = parse();
  const root = document.body ?? document.documentElement;
  return { title: fallbackTitle, markdown: root ? domToMarkdown(root, { baseUrl: url }) : "", readable: false };
}

/** Cuts `text` to at most `maxChars` characters, at a paragraph or line break when one is near, and says so. */
export function truncateText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  let cut = text.slice(0, maxChars);
  const breakAt = Math.max(cut.lastIndexOf("\n\n"), cut.lastIndexOf("\n"));
  if (breakAt > maxChars * 0.8) cut = cut.slice(0, breakAt);
  // Never end on half a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return { text: cut.trimEnd(), truncated: true };
}
