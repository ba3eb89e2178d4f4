import { describe, expect, it } from "vitest";
import { extractReadable, formatFetchedPage, truncateText } from "../src/index.js";

const ARTICLE = `<!doctype html><html><head><title>Deer facts | Wildlife Site</title><style>p{color:red}</style></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a> | <a href="/shop">Shop</a></nav>
<main><article>
<h1>Deer facts</h1>
<p>Deer are <b>ruminant</b> mammals of the family <a href="/wiki/Cervidae">Cervidae</a>. Males grow antlers &amp; shed them every year.</p>
<h2>Species</h2>
<ul><li>Red deer<ul><li>Scottish red deer</li></ul></li><li>Roe deer</li></ul>
<ol><li>First</li><li>Second</li></ol>
<p>The velvet phase lasts several months, during which the antler is covered in skin that supplies blood to the growing bone.</p>
<blockquote><p>Antlers are the fastest-growing bone.</p></blockquote>
<pre><code>weight = 200 # kg</code></pre>
<table><thead><tr><th>Species</th><th>Weight</th></tr></thead><tbody><tr><td>Red</td><td>200 kg</td></tr><tr><td>Roe</td><td>25 kg</td></tr></tbody></table>
<img src="/img/stag.jpg" alt="A stag">
<script>document.write("tracking")</script>
<form><input name="email"><button>Subscribe</button></form>
</article></main>
<footer>© Wildlife Site</footer>
</body></html>`;

describe("extractReadable (Readability over linkedom, to Markdown)", () => {
  const page = extractReadable(ARTICLE, "https://wildlife.example/deer/facts");

  it("finds the article and its title", () => {
    expect(page.readable).toBe(true);
    expect(page.title).toMatch(/Deer facts/);
  });

  it("converts headings, emphasis, lists, quotes, code and tables to Markdown", () => {
    expect(page.markdown).toContain("## Species");
    expect(page.markdown).toContain("**ruminant**");
    expect(page.markdown).toContain("- Red deer\n  - Scottish red deer\n- Roe deer");
    expect(page.markdown).toContain("1. First\n2. Second");
    expect(page.markdown).toContain("> Antlers are the fastest-growing bone.");
    expect(page.markdown).toContain("```\nweight = 200 # kg\n```");
    expect(page.markdown).toContain("| Species | Weight |\n| --- | --- |\n| Red | 200 kg |\n| Roe | 25 kg |");
  });

  it("resolves links and images against the page URL and decodes entities", () => {
    expect(page.markdown).toContain("[Cervidae](https://wildlife.example/wiki/Cervidae)");
    expect(page.markdown).toContain("![A stag](https://wildlife.example/img/stag.jpg)");
    expect(page.markdown).toContain("antlers & shed");
  });

  it("drops navigation, scripts, styles, forms and footers", () => {
    expect(page.markdown).not.toMatch(/tracking|Subscribe|color:red|Shop|© Wildlife/);
  });

  it("falls back to the whole body when there is no article", () => {
    const fallback = extractReadable("<html><body><div>Just <i>one</i> line.</div><script>x()</script></body></html>");
    expect(fallback.markdown).toBe("Just *one* line.");
  });

  it("drops javascript: links but keeps their text", () => {
    const out = extractReadable('<html><body><p>Click <a href="javascript:alert(1)">here</a> now.</p></body></html>');
    expect(out.markdown).toBe("Click here now.");
  });
});

describe("truncateText and formatFetchedPage", () => {
  it("cuts at a paragraph break near the limit and reports it", () => {
    const text = `${"a".repeat(90)}\n\n${"b".repeat(50)}`;
    expect(truncateText(text, 100)).toEqual({ text: "a".repeat(90), truncated: true });
    expect(truncateText("short", 100)).toEqual({ text: "short", truncated: false });
  });

  it("never leaves half a surrogate pair", () => {
    const { text } = truncateText(`${"x".repeat(9)}😀😀`, 10);
    expect(text).toBe("x".repeat(9));
  });

  it("formats title, URL, extracted Markdown and a truncation note within the cap", () => {
    const long = `<html><head><title>Long</title></head><body><article>${Array.from({ length: 50 }, (_, i) => `<p>Paragraph ${i} about antler growth and deer biology in general.</p>`).join("")}</article></body></html>`;
    const out = formatFetchedPage({ url: "https://example.com/long", content: long, format: "html" }, 500);
    expect(out.text.startsWith("# Long\nURL: https://example.com/long\n\nParagraph 0")).toBe(true);
    expect(out.truncated).toBe(true);
    expect(out.text).toMatch(/\[truncated: showing \d+ of \d+ characters\]$/);
    expect(out.text.length).toBeLessThan(600);
  });
});
