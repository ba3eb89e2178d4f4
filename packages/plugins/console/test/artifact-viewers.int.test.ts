import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, expectNoHorizontalScroll, newThread, openSignedIn, PHONE, screenshot, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;
/** Another host on loopback: the Markdown answer names an image there, and it must never be asked for. */
let outside: Server;
let outsideHits: string[] = [];
let outsideImage = "";

const open = (target: ConsoleServer, viewport: { width: number; height: number }) =>
  openSignedIn(browser, `${target.url}/threads`, viewport, (close) => onTestFinished(close));

const isPhone = (viewport: { width: number }) => viewport.width < 760;

/** Runs the showcase turn (five files written and presented, then a rich Markdown answer) and waits for its end. */
async function runShowcase(page: Page): Promise<string> {
  const threadId = await newThread(page);
  await send(page, `showcase ${outsideImage}`);
  await page.locator(".msg-ai").getByRole("heading", { name: "Findings" }).waitFor();
  await page.getByRole("button", { name: "Send", exact: true }).waitFor();
  return threadId;
}

/** The artifacts panel: in place on a desktop, in the details drawer on a phone. */
async function artifactsPanel(page: Page, viewport: { width: number }) {
  if (isPhone(viewport)) await page.getByRole("button", { name: "Details" }).click();
  const panel = page.getByRole("region", { name: "Artifacts" });
  await panel.waitFor();
  return panel;
}

async function openArtifact(page: Page, name: string) {
  await page.getByRole("region", { name: "Artifacts" }).getByRole("button", { name, exact: true }).click();
  const view = page.getByRole("article", { name: new RegExp(`Artifact .*${name.replace(".", "\\.")}$`) });
  await view.waitFor();
  return view;
}

describeWithChromium("Markdown fidelity and artifact viewers", (executablePath) => {
  beforeAll(async () => {
    outside = createServer((request, response) => {
      outsideHits.push(request.url ?? "");
      response.writeHead(200, { "content-type": "image/png" }).end();
    });
    await new Promise<void>((resolve) => outside.listen(0, "127.0.0.1", resolve));
    outsideImage = `http://127.0.0.1:${(outside.address() as AddressInfo).port}/pixel.png`;
    server = await startConsoleServer({ chunkDelayMs: 1, consoleConfig: { artifacts: { csv_max_rows: 25 } } });
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => outside?.close(resolve));
  });

  for (const viewport of [DESKTOP, PHONE]) {
    const size = `${viewport.width}×${viewport.height}`;
    const suffix = isPhone(viewport) ? "-phone" : "";

    it(`renders nested lists, aligned tables, math, labelled code and Markdown tool results, and loads no outside image (${size})`, async () => {
      outsideHits = [];
      const page = await open(server, viewport);
      const foreign: string[] = [];
      page.on("request", (request) => {
        if (new URL(request.url()).origin !== server.url && !request.url().startsWith("blob:")) foreign.push(request.url());
      });
      await runShowcase(page);
      const answer = page.locator(".msg-ai").last();

      // Three levels of list, each inside its parent item.
      await answer.locator("ol > li > ul > li > ul > li", { hasText: "nested third level" }).waitFor();
      expect(await answer.locator("ol > li > ul > li").first().textContent()).toContain("from the CSV export");
      // Column alignment from the separator row.
      const aligns = await answer
        .locator("table tr:first-child td")
        .evaluateAll((cells) => cells.map((c) => (c as unknown as { style: { textAlign: string } }).style.textAlign));
      expect(aligns.slice(1)).toEqual(["left", "center", "right"]);
      // Math typeset by KaTeX (loaded on demand) as MathML, inline and as a block.
      await answer.locator("span.math math").first().waitFor();
      await answer.locator("div.math-display math[display='block']").waitFor();
      expect(await answer.locator("span.math").first().getAttribute("data-tex")).toBe("E = mc^2");
      // A fenced block names its language and has a copy button.
      const code = answer.locator("figure.code-block");
      await expect.poll(() => code.locator("figcaption .code-lang").textContent()).toBe("python");
      await code.getByRole("button", { name: "Copy the python code" }).waitFor();
      // The image that is one of the thread's artifacts is drawn; the one on another host is a link, never fetched.
      const chart = answer.getByRole("img", { name: "bar chart" });
      await expect.poll(() => chart.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
      const pixel = answer.getByRole("link", { name: "[image: tracking pixel]" });
      expect(await pixel.getAttribute("href")).toBe(outsideImage);
      expect(await answer.locator(`img[src^="http"]`).count()).toBe(0);
      // A path that climbs out of the artifacts folder is not an artifact: its alt text only. Dollar amounts are not math.
      await answer.getByText("[image: escaping path]").waitFor();
      await answer.getByText("Prices like $5 and $10 stay text.").waitFor();
      expect(await answer.locator(".math").count()).toBe(2);
      // A tool's Markdown result is rendered too.
      const card = page.locator('details[data-tool="lookup_notes"]');
      await card.locator("summary").click();
      await card.locator(".tool-result ul > li > ul > li", { hasText: "a detail under it" }).waitFor();
      await card.locator(".tool-result strong", { hasText: "Notes on growth" }).waitFor();

      await expectAccessible(page, `markdown at ${size}`);
      if (isPhone(viewport)) await expectNoHorizontalScroll(page, "markdown answer");
      await answer.scrollIntoViewIfNeeded();
      await screenshot(page, `console-markdown${suffix}`);
      expect(outsideHits).toEqual([]);
      expect(foreign).toEqual([]);
    });

    it(`shows CSV as a sortable, bounded table, HTML in a sandbox without scripts, images, PDFs and code, full screen (${size})`, async () => {
      const page = await open(server, viewport);
      await runShowcase(page);
      const panel = await artifactsPanel(page, viewport);
      await panel.getByRole("button", { name: "data.csv" }).waitFor();

      // CSV: the first 25 of 30 rows (artifacts.csv_max_rows), counted; a header sorts, numbers as numbers.
      let view = await openArtifact(page, "data.csv");
      await view.getByTestId("csv-count").filter({ hasText: "Showing the first 25 of 30 rows" }).waitFor();
      expect(await view.locator("tbody tr").count()).toBe(25);
      expect(await view.locator("tbody tr").first().locator("td").nth(2).textContent()).toBe("quoted, with comma");
      await view.getByRole("button", { name: "population" }).click();
      const populations = async () => (await view.locator("tbody tr td:nth-child(2)").allTextContents()).map(Number);
      const ascending = await populations();
      expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
      expect(await view.locator("th", { hasText: "population" }).getAttribute("aria-sort")).toBe("ascending");
      await view.getByRole("button", { name: "population" }).click();
      expect(await view.locator("th", { hasText: "population" }).getAttribute("aria-sort")).toBe("descending");
      expect(await populations()).toEqual([...ascending].reverse());
      expect(await view.getByRole("link", { name: "Download" }).getAttribute("download")).toBe("data.csv");
      await expectAccessible(page, `csv at ${size}`);
      await screenshot(page, `console-artifact-csv${suffix}`);

      // Full screen: the viewer covers the window; Escape gives the panel back.
      await view.getByRole("button", { name: "Full screen" }).click();
      const box = await view.boundingBox();
      expect(box?.width).toBe(viewport.width);
      expect(box?.height).toBe(viewport.height);
      await expectAccessible(page, `full screen at ${size}`);
      await screenshot(page, `console-artifact-fullscreen${suffix}`);
      await page.keyboard.press("Escape");
      await view.getByRole("button", { name: "Full screen" }).waitFor();

      // HTML: framed from the sandboxed route, with an opaque origin and its script not run.
      view = await openArtifact(page, "page.html");
      const frame = view.locator("iframe[title='HTML page.html']");
      expect(await frame.getAttribute("sandbox")).toBe("");
      await view.getByText("Sandboxed page: scripts are off.").waitFor();
      const body = page.frameLocator("iframe[title='HTML page.html']").locator("body");
      await body.getByRole("heading", { name: "Sandboxed report" }).waitFor();
      expect(await body.locator("#status").textContent()).toBe("scripts did not run");
      expect(await page.title()).not.toBe("pwned");
      await expectAccessible(page, `html at ${size}`);
      await screenshot(page, `console-artifact-html${suffix}`);

      // An image, a PDF in the browser's own viewer, code highlighted.
      view = await openArtifact(page, "chart.svg");
      await expect
        .poll(() =>
          view.getByRole("img", { name: "chart.svg" }).evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
        )
        .toBe(120);
      view = await openArtifact(page, "doc.pdf");
      expect(await view.locator("iframe[title='PDF doc.pdf']").getAttribute("src")).toMatch(/^blob:/);
      view = await openArtifact(page, "analysis.py");
      await view.locator('code[data-lang="py"] .tok-k', { hasText: "def" }).waitFor();
      await view.locator('code[data-lang="py"] .tok-c', { hasText: "# the average of the rows" }).waitFor();
      await expectAccessible(page, `code at ${size}`);
      if (isPhone(viewport)) await expectNoHorizontalScroll(page, "artifacts drawer");
    });
  }

  it("resizes the details panel from its edge, by keyboard and by pointer", async () => {
    const page = await open(server, DESKTOP);
    await newThread(page);
    const side = page.getByRole("complementary", { name: "Thread details" });
    const width = async () => (await side.boundingBox())?.width ?? 0;
    const before = await width();
    const handle = page.getByRole("separator", { name: "Resize the details panel" });
    await handle.focus();
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    await expect.poll(width).toBe(before + 80);
    expect(Number(await handle.getAttribute("aria-valuenow"))).toBe(before + 80);
    await page.keyboard.press("Home");
    await expect.poll(width).toBe(280);
    const grip = await handle.boundingBox();
    if (!grip) throw new Error("the resize handle is not drawn");
    await page.mouse.move(grip.x + grip.width / 2, grip.y + 100);
    await page.mouse.down();
    await page.mouse.move(DESKTOP.width - 600, grip.y + 100, { steps: 4 });
    await page.mouse.up();
    await expect.poll(width).toBe(600);
    await expectAccessible(page, "resized panel");
  });
});

describeWithChromium("HTML artifacts with artifacts.html_scripts: true", (executablePath) => {
  let scripted: ConsoleServer;
  beforeAll(async () => {
    outsideImage = "http://example.invalid/pixel.png";
    scripted = await startConsoleServer({ chunkDelayMs: 1, consoleConfig: { artifacts: { html_scripts: true } } });
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await scripted?.close();
  });

  it("runs the page's scripts inside the sandbox, where the console stays out of their reach", async () => {
    const page = await open(scripted, DESKTOP);
    const threadId = await runShowcase(page);
    await artifactsPanel(page, DESKTOP);
    const view = await openArtifact(page, "page.html");
    expect(await view.locator("iframe").getAttribute("sandbox")).toBe("allow-scripts");
    await view.getByText("Sandboxed page: scripts run, with no access to the console.").waitFor();
    const status = page.frameLocator("iframe[title='HTML page.html']").locator("body");
    await status.getByText("script ran").waitFor();
    await status.getByText("console out of reach").waitFor();
    expect(await page.title()).not.toBe("pwned");

    // The route keeps the sandbox when the URL is opened on its own, and serves HTML only.
    const route = `/console/artifact-html/${threadId}/mnt/user-data/outputs`;
    const html = await scripted.api(`${route}/page.html`);
    expect(html.status).toBe(200);
    expect(html.headers.get("content-security-policy")).toMatch(/^sandbox allow-scripts; default-src 'none'/);
    expect(html.headers.get("content-security-policy")).not.toContain("allow-same-origin");
    const csv = await scripted.api(`${route}/data.csv`);
    expect(csv.status).toBe(415);
    const refused = (await csv.json()) as { error: { code: string; message: string; hint: string } };
    expect(refused.error.code).toBe("ANTLER_ERR_CONSOLE_ARTIFACT_NOT_HTML");
    expect(refused.error.message).toBe("/mnt/user-data/outputs/data.csv is text/csv, not HTML");
    expect(refused.error.hint).toContain(`/api/threads/${threadId}/artifacts/mnt/user-data/outputs/data.csv`);
    expect((await scripted.api(`${route}/missing.html`)).status).toBe(404);
    const garbled = await scripted.api(`${route}/%E0%A4%A.html`);
    expect(garbled.status).toBe(400);
    expect(((await garbled.json()) as { error: { message: string } }).error.message).toContain("percent-encoding");
  });
});

describe("the console's config", () => {
  it("refuses a bad artifacts setting with the path of the key", async () => {
    const { consoleConfigSchema } = await import("../src/config.js");
    expect(consoleConfigSchema.parse({}).artifacts).toEqual({ html_scripts: false, csv_max_rows: 1000 });
    const bad = consoleConfigSchema.safeParse({ artifacts: { html_scripts: "yes" } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["artifacts", "html_scripts"]);
  });
});
