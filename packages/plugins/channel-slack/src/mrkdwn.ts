// Markdown (as models write it) to Slack's mrkdwn, and Slack's message markup back to plain text.
// Placeholders for code spans and links use private-use characters (U+E000, U+E001), which no text contains.

/** mrkdwn needs only &, < and > escaped; everything else is literal. */
const escapeMrkdwn = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** Inline spans of one line; code spans are taken out first, so nothing inside them is formatted. */
function inline(text: string): string {
  const held: string[] = [];
  const hold = (value: string) => {
    held.push(value);
    return `\uE000${held.length - 1}\uE000`;
  };
  let out = text.replace(/`([^`\n]+)`/g, (_, code: string) => hold(`\`${escapeMrkdwn(code)}\``));
  out = out.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_, label: string, url: string) =>
    hold(`<${url.replaceAll("|", "%7C").replaceAll(">", "%3E")}|${escapeMrkdwn(label).replaceAll("|", "¦")}>`),
  );
  out = escapeMrkdwn(out)
    // Italics first, so the bold produced below (single asterisks) is not read as italics again.
    .replace(/(^|[^\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/g, "$1_$2_")
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "\uE001$1\uE001")
    .replace(/__(?=\S)([\s\S]*?\S)__/g, "\uE001$1\uE001")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "~$1~")
    .replaceAll("\uE001", "*");
  return out.replace(/\uE000(\d+)\uE000/g, (_, i: string) => held[Number(i)] ?? "");
}

/**
 * Converts Markdown to Slack mrkdwn: **bold** → *bold*, *italic* → _italic_, ~~strike~~ → ~strike~,
 * [label](url) → <url|label>, headings → bold lines, list items → bullets, fenced code → ``` blocks (no language),
 * quotes kept; &, < and > escaped outside links.
 */
export function markdownToMrkdwn(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^\s*```/.test(line)) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```\s*$/.test(lines[i] as string)) body.push(lines[i++] as string);
      out.push(`\`\`\`\n${escapeMrkdwn(body.join("\n"))}\n\`\`\``);
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      out.push(`*${inline((heading[1] as string).replace(/\*\*/g, ""))}*`);
      continue;
    }
    const quote = /^\s{0,3}>\s?(.*)$/.exec(line);
    if (quote) {
      out.push(`> ${inline(quote[1] as string)}`);
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      out.push(`${bullet[1]}• ${inline(bullet[2] as string)}`);
      continue;
    }
    out.push(inline(line));
  }
  return out.join("\n");
}

/**
 * Slack's message markup as plain text for the agent: `<@U1>` → `@U1`, `<#C1|general>` → `#general`,
 * `<https://x|label>` → `label (https://x)`, `<!here>` → `@here`, and &amp; &lt; &gt; unescaped.
 */
export function slackTextToPlain(text: string): string {
  return text
    .replace(/<@([A-Z0-9]+)(?:\|[^>]*)?>/g, "@$1")
    .replace(/<#([A-Z0-9]+)(?:\|([^>]*))?>/g, (_, id: string, name?: string) => `#${name || id}`)
    .replace(/<!([a-z]+)(?:\^[^|>]*)?(?:\|[^>]*)?>/g, "@$1")
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, "$2 ($1)")
    .replace(/<((?:https?|mailto):[^>]+)>/g, "$1")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}
