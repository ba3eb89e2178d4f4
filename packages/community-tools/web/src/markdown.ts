/**
 * A small DOM → Markdown converter for extracted article content. It covers what readable pages are made of
 * (headings, paragraphs, links, emphasis, code, lists, quotes, tables, images) and drops everything that is
 * not text for a reader (scripts, styles, forms, embedded media).
 */

/** The slice of the DOM the converter reads; linkedom's nodes satisfy it. */
export interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<DomNode>;
  getAttribute?(name: string): string | null;
}

const TEXT_NODE = 3;
const ELEMENT_NODE = 1;

const SKIP = new Set([
  "SCRIPT",
  "STYLE",
  "NOSCRIPT",
  "TEMPLATE",
  "SVG",
  "CANVAS",
  "IFRAME",
  "OBJECT",
  "EMBED",
  "VIDEO",
  "AUDIO",
  "FORM",
  "BUTTON",
  "INPUT",
  "SELECT",
  "TEXTAREA",
  "HEAD",
  "META",
  "LINK",
]);
const BLOCK = new Set([
  "P",
  "DIV",
  "SECTION",
  "ARTICLE",
  "MAIN",
  "HEADER",
  "FOOTER",
  "ASIDE",
  "NAV",
  "FIGURE",
  "FIGCAPTION",
  "DL",
  "DT",
  "DD",
  "ADDRESS",
  "DETAILS",
  "SUMMARY",
  "BODY",
  "HTML",
]);

export interface MarkdownOptions {
  /** Relative links and image sources are resolved against this URL. */
  readonly baseUrl?: string | undefined;
  /** Keep images as `![alt](src)`. Default true. */
  readonly images?: boolean | undefined;
}

function resolveHref(href: string, base: string | undefined): string | undefined {
  const trimmed = href.trim();
  if (trimmed === "" || /^(javascript|data|vbscript):/i.test(trimmed)) return undefined;
  if (trimmed.startsWith("#")) return undefined;
  try {
    return base ? new URL(trimmed, base).href : new URL(trimmed).href;
  } catch {
    return undefined;
  }
}

function escapeInline(text: string): string {
  return text.replace(/([\\`*_[\]])/g, "\\$1");
}

function children(node: DomNode): DomNode[] {
  return Array.from(node.childNodes);
}

class Converter {
  constructor(private readonly options: MarkdownOptions) {}

  inline(node: DomNode, pre = false): string {
    let out = "";
    for (const child of children(node)) out += this.node(child, pre, 0);
    return out;
  }

  node(node: DomNode, pre: boolean, depth: number): string {
    if (node.nodeType === TEXT_NODE) {
      const text = node.textContent ?? "";
      return pre ? text : escapeInline(text.replace(/\s+/g, " "));
    }
    if (node.nodeType !== ELEMENT_NODE) return "";
    const tag = node.nodeName.toUpperCase();
    if (SKIP.has(tag)) return "";
    const attr = (name: string) => node.getAttribute?.(name) ?? null;
    switch (tag) {
      case "H1":
      case "H2":
      case "H3":
      case "H4":
      case "H5":
      case "H6": {
        const text = this.inline(node).replace(/\s+/g, " ").trim();
        return text ? `\n\n${"#".repeat(Number(tag[1]))} ${text}\n\n` : "";
      }
      case "BR":
        return pre ? "\n" : "  \n";
      case "HR":
        return "\n\n---\n\n";
      case "STRONG":
      case "B": {
        const text = this.inline(node, pre).trim();
        return text ? `**${text}**` : "";
      }
      case "EM":
      case "I": {
        const text = this.inline(node, pre).trim();
        return text ? `*${text}*` : "";
      }
      case "CODE": {
        if (pre) return node.textContent ?? "";
        const text = (node.textContent ?? "").replace(/\s+/g, " ");
        return text ? `\`${text.replace(/`/g, "'")}\`` : "";
      }
      case "PRE": {
        const text = (node.textContent ?? "").replace(/\n+$/, "");
        return text ? `\n\n\`\`\`\n${text.replace(/```/g, "'''")}\n\`\`\`\n\n` : "";
      }
      case "A": {
        const text = this.inline(node, pre).replace(/\s+/g, " ").trim();
        const href = resolveHref(attr("href") ?? "", this.options.baseUrl);
        if (!href) return text;
        return `[${text || href}](${href.replace(/\)/g, "%29").replace(/ /g, "%20")})`;
      }
      case "IMG": {
        if (this.options.images === false) return "";
        const src = resolveHref(attr("src") ?? "", this.options.baseUrl);
        if (!src) return "";
        return `![${escapeInline((attr("alt") ?? "").trim())}](${src.replace(/\)/g, "%29")})`;
      }
      case "UL":
      case "OL":
        return `\n\n${this.list(node, tag === "OL", depth)}\n\n`;
      case "LI":
        return this.inline(node, pre);
      case "BLOCKQUOTE": {
        const inner = this.block(node, depth).trim();
        return inner
          ? `\n\n${inner
              .split("\n")
              .map((l) => `> ${l}`.trimEnd())
              .join("\n")}\n\n`
          : "";
      }
      case "TABLE":
        return `\n\n${this.table(node)}\n\n`;
      default:
        if (BLOCK.has(tag)) return `\n\n${this.block(node, depth)}\n\n`;
        return this.inline(node, pre);
    }
  }

  block(node: DomNode, depth: number): string {
    let out = "";
    for (const child of children(node)) out += this.node(child, false, depth);
    return out;
  }

  list(node: DomNode, ordered: boolean, depth: number): string {
    const lines: string[] = [];
    let n = 1;
    for (const child of children(node)) {
      if (child.nodeType !== ELEMENT_NODE || child.nodeName.toUpperCase() !== "LI") continue;
      const marker = ordered ? `${n++}.` : "-";
      let text = "";
      const nested: string[] = [];
      for (const part of children(child)) {
        const tag = part.nodeType === ELEMENT_NODE ? part.nodeName.toUpperCase() : "";
        if (tag === "UL" || tag === "OL") nested.push(this.list(part, tag === "OL", depth + 1));
        else text += this.node(part, false, depth + 1);
      }
      const indent = "  ".repeat(depth);
      const body = text
        .replace(/\n{2,}/g, "\n")
        .trim()
        .split("\n")
        .map((l, i) => (i === 0 ? l : `${indent}  ${l}`))
        .join("\n");
      lines.push(`${indent}${marker} ${body}`);
      for (const sub of nested) lines.push(sub);
    }
    return lines.join("\n");
  }

  table(node: DomNode): string {
    const rows: string[][] = [];
    const collect = (n: DomNode) => {
      for (const child of children(n)) {
        if (child.nodeType !== ELEMENT_NODE) continue;
        const tag = child.nodeName.toUpperCase();
        if (tag === "TR") {
          rows.push(
            children(child)
              .filter((c) => c.nodeType === ELEMENT_NODE && /^(TD|TH)$/i.test(c.nodeName))
              .map((c) => this.inline(c).replace(/\s+/g, " ").replace(/\|/g, "\\|").trim()),
          );
        } else if (tag === "THEAD" || tag === "TBODY" || tag === "TFOOT") collect(child);
      }
    };
    collect(node);
    if (rows.length === 0) return "";
    const width = Math.max(...rows.map((r) => r.length));
    const pad = (r: string[]) => [...r, ...Array<string>(width - r.length).fill("")];
    const [head, ...body] = rows.map(pad);
    return [`| ${(head as string[]).join(" | ")} |`, `|${" --- |".repeat(width)}`, ...body.map((r) => `| ${r.join(" | ")} |`)].join("\n");
  }
}

/** Converts a DOM subtree to Markdown. */
export function domToMarkdown(node: DomNode, options: MarkdownOptions = {}): string {
  const raw = new Converter(options).node(node, false, 0);
  return raw
    .split("\n")
    .map((line) => line.replace(/[ \t]+$/g, (m) => (m === "  " ? m : "")))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^[ \t]+(?=\S)/gm, (m) => (m.length >= 2 && m.length % 2 === 0 ? m : ""))
    .trim();
}
