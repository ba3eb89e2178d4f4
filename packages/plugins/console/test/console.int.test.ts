import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describeWithChromium } from "@antler/kernel/testing";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { ALICE_KEY, type ConsoleServer, LONG_STORY, screenshotsDir, startConsoleServer, startDroppingProxy } from "./harness.js";
import { signInContext } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;
const pages: Page[] = [];

async function openConsole(path: string, options: { signedIn?: boolean; origin?: string } = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
  if (options.signedIn !== false) await signInContext(context, options.origin ?? server.url);
  const page = await context.newPage();
  pages.push(page);
  page.on("dialog", (dialog) => void dialog.accept());
  await page.goto(`${options.origin ?? server.url}${path}`);
  return page;
}

/** No serious or critical axe-core violation on what the page shows now. */
async function expectAccessible(page: Page, screen: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${screen}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad).toEqual([]);
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotsDir, { recursive: true });
  await page.screenshot({ path: join(screenshotsDir, `${name}.png`) });
}

async function newThread(page: Page): Promise<string> {
  await page.getByRole("button", { name: "New thread" }).click();
  await page.waitForURL(/\/threads\/[^/]+$/);
  return decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel("Message", { exact: true }).fill(text);
  await page.getByRole("button", { name: "Send", exact: true }).click();
}

describeWithChromium("Antler Console in Chromium against a live gateway", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer();
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("asks for an API key, trades it for an HttpOnly session cookie (the key is kept nowhere), and lists the user's threads", async () => {
    const page = await openConsole("/", { signedIn: false });
    // The SPA renders after the load event that goto waits for: wait for the form (a timeout fails the test).
    await page.getByLabel("API key").waitFor({ state: "visible" });
    await expectAccessible(page, "sign-in");
    await screenshot(page, "sign-in");
    await page.getByLabel("API key").fill("wrong-key-0123456789abcdef");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("the API key is not valid").waitFor();
    await page.getByLabel("API key").fill(ALICE_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "New thread" }).waitFor();
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: "antler_session", httpOnly: true, sameSite: "Strict" });
    expect(await page.evaluate("document.cookie")).toBe("");
    expect(await page.evaluate("JSON.stringify({ ...sessionStorage, ...localStorage })")).not.toContain(ALICE_KEY);
    const id = await newThread(page);
    await page.getByPlaceholder("Search threads").fill("no such title");
    await page.getByText("No threads match.").waitFor();
    await page.getByPlaceholder("Search threads").fill("untitled");
    await page
      .getByRole("link", { name: /Untitled thread/ })
      .first()
      .waitFor();
    expect(((await (await server.api(`/threads/${id}`)).json()) as { user_id: string }).user_id).toBe("alice");
    await page
      .getByRole("button", { name: /Delete thread/ })
      .first()
      .click();
    await page.waitForURL(/\/threads$/);
    expect((await server.api(`/threads/${id}`)).status).toBe(404);
  });

  it("sends a message and shows the answer streaming in, then the stop reason and token usage", async () => {
    const page = await openConsole("/threads");
    await expectAccessible(page, "threads");
    await newThread(page);
    await send(page, "hello there");
    const answer = page.locator(".msg-ai").last();
    await answer.getByText("Hello from the scripted model").waitFor();
    // Part of the answer is on screen while the run is still going: it streamed, not arrived at once.
    const partial = (await answer.textContent()) ?? "";
    expect(await page.locator(".badge-running").count()).toBeGreaterThan(0);
    expect(partial).not.toContain("stream in.");
    await answer.getByText("so you can watch it stream in.").waitFor();
    await page.getByTestId("stop-reason").waitFor();
    await expect(page.getByTestId("usage").textContent()).resolves.toMatch(/tokens: \d+ in \/ \d+ out/);
    await expectAccessible(page, "chat");
    await screenshot(page, "chat");
  });

  it("answers a v2 form (all seven field types, checked before sending) and sees the next turn", async () => {
    const page = await openConsole("/threads");
    await newThread(page);
    await send(page, "plan a trip");
    const card = page.locator("section.ask");
    await card.waitFor();
    for (const label of ["Destination *", "Notes", "Travellers *", "Pace *", "Start date *"]) await card.getByLabel(label).waitFor();
    await card.getByText("Interests").waitFor();
    await card.getByLabel("Dates are flexible").waitFor();
    await expectAccessible(page, "human input form");
    // Client-side validation: required fields and a non-number are refused, nothing is sent.
    await card.getByLabel("Travellers *").fill("two");
    await card.getByRole("button", { name: "Send answers" }).click();
    await card.getByText("Destination is required").waitFor();
    await card.getByText("Travellers must be a number").waitFor();
    await card.getByText("Choose an option for Pace").waitFor();
    expect(await page.locator(".msg-human").count()).toBe(1);
    await card.getByLabel("Destination *").fill("Lisbon");
    await card.getByLabel("Travellers *").fill("2");
    await card.getByLabel("Pace *").selectOption("relaxed");
    await card.getByLabel("food").check();
    await card.getByLabel("hiking").check();
    await card.getByLabel("Dates are flexible").check();
    await card.getByLabel("Start date *").fill("2027-05-01");
    await screenshot(page, "human-input-form");
    await card.getByRole("button", { name: "Send answers" }).click();
    await page.getByText("Thanks! Planning Lisbon for 2 travellers from 2027-05-01.").waitFor();
    const reply = (await page.locator(".msg-human").last().textContent()) ?? "";
    expect(reply).toContain("destination: Lisbon");
    expect(reply).toContain("interests: food, hiking");
    expect(reply).toContain("flexible: yes");
  });

  it("answers a v1 choice card with one click and sees the next turn", async () => {
    const page = await openConsole("/threads");
    await newThread(page);
    await send(page, "pick a colour for the chart");
    const card = page.locator("section.ask");
    await card.getByText("Which colour should the chart use?").waitFor();
    await card.getByLabel("Or answer in your own words").waitFor();
    await card.getByRole("button", { name: "green" }).click();
    await page.getByText("Painting it green.").waitFor();
    // Answered: the card stays in the history, its controls disabled.
    expect(await card.getByRole("button", { name: "blue" }).isDisabled()).toBe(true);
  });

  it("rejoins a run after the connection drops and shows every streamed word once (Last-Event-ID)", async () => {
    const proxy = await startDroppingProxy(server.url);
    onTestFinished(() => proxy.close());
    const page = await openConsole("/threads", { origin: proxy.url });
    const threadId = await newThread(page);
    const joins: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "GET" && /\/runs\/[^/]+\/stream$/.test(new URL(request.url()).pathname))
        joins.push(request.headers()["last-event-id"] ?? "");
    });
    await send(page, "tell me a long story");
    const answer = page.locator(".msg-ai").last();
    await answer.getByText(/word3\b/).waitFor();
    expect(proxy.dropAll()).toBeGreaterThan(0);
    await answer.getByText(/word60$/).waitFor({ timeout: 30_000 });
    expect(((await answer.locator(".markdown").textContent()) ?? "").trim()).toBe(LONG_STORY);
    // The page did drop and rejoin: at least one join, after a frame it had already seen.
    expect(joins.length).toBeGreaterThan(0);
    expect(Number(joins[0])).toBeGreaterThan(1);
    // The run went on while the page was away, and finished.
    await page.getByTestId("stop-reason").filter({ hasText: "stop: end_turn" }).waitFor();
    const status = async () =>
      ((await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ status: string }> }).runs[0]?.status;
    await expect.poll(status, { timeout: 10_000 }).toBe("success");
  });

  it("uploads a file, runs a turn that writes a report from it, opens the artifact rendered and sanitized, and times each tool call", async () => {
    const page = await openConsole("/threads");
    await newThread(page);
    await page.getByText("up to 5 files, 1.0 MB each").waitFor();
    // Over the limit: refused in the page, with the limit named, before anything is sent.
    await page
      .locator('input[type="file"]')
      .setInputFiles({ name: "big.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(1024 * 1024 + 1) });
    await page.getByText("big.bin is 1,048,577 bytes, over the limit of 1.0 MB (1,048,576 bytes).").waitFor();
    // Dropped onto the chat, as a user drags a file from the desktop.
    const files = await page.evaluateHandle(
      '(() => { const dt = new DataTransfer(); dt.items.add(new File(["travel notes\\n"], "notes.txt", { type: "text/plain" })); return dt; })()',
    );
    await page.dispatchEvent("section.chat", "dragover", { dataTransfer: files });
    await page.dispatchEvent("section.chat", "drop", { dataTransfer: files });
    await page.getByText("/mnt/user-data/uploads/notes.txt").waitFor();
    await send(page, "write a report about my upload");
    await page.getByText("The summary is in the artifacts panel.").waitFor();
    await page.getByRole("button", { name: "summary.md" }).click();
    const view = page.locator(".artifact-view");
    await view.getByRole("heading", { name: "Upload summary" }).waitFor();
    await view.getByText("/mnt/user-data/uploads/notes.txt").waitFor();
    await view.locator("table td", { hasText: "files" }).waitFor();
    await view.locator('code[data-lang="python"] .tok-k', { hasText: "def" }).first().waitFor();
    await view.locator('code[data-lang="python"] .tok-c', { hasText: "# the table's total" }).waitFor();
    // The script tag in the Markdown is shown as text, never run.
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    await view.getByText("<script>window.__pwned = true</script>").waitFor();
    await expectAccessible(page, "artifacts");
    await screenshot(page, "artifacts");

    // Tool cards carry their duration; the timeline has every model and tool call on one axis.
    const card = page.locator('details[data-tool="write_report"]');
    await card.locator(".duration").waitFor();
    await card.locator("summary").click();
    await card.getByText('"name": "summary.md"').waitFor();
    await page.getByRole("tab", { name: "Timeline" }).click();
    const spans = page.locator("ol.spans > li");
    await spans.first().waitFor();
    for (const tool of ["write_report", "present_files"]) {
      const row = page.locator(`li[data-span="tool"][data-name="${tool}"]`);
      await expect(row.locator(".span-duration").textContent()).resolves.toMatch(/^\d+(\.\d+)? (ms|s)$/);
    }
    expect(await page.locator('li[data-span="model"]').count()).toBe(3);
    const writeMs = Number(((await page.locator('li[data-name="write_report"] .span-duration').textContent()) ?? "").replace(" ms", ""));
    expect(writeMs).toBeGreaterThanOrEqual(100);
    const traceId = (await page.getByTestId("trace-id").textContent()) ?? "";
    const runs = (await (
      await server.api(`/threads/${decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "")}/runs`)
    ).json()) as {
      runs: Array<{ trace_id: string }>;
    };
    expect(runs.runs.map((r) => r.trace_id)).toContain(traceId);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.getByRole("button", { name: "Copy trace id" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(traceId);
    await page.getByText("added /mnt/user-data/outputs/summary.md").waitFor();
    await expectAccessible(page, "timeline");
    await screenshot(page, "timeline");
  });

  it("cancels a running run from the Cancel button", async () => {
    const page = await openConsole("/threads");
    const threadId = await newThread(page);
    await send(page, "wait for a long time");
    const cancel = page.getByRole("button", { name: "Cancel run" });
    await cancel.waitFor();
    await cancel.click();
    await page.getByText("Run cancelled.").waitFor();
    await expect(page.getByTestId("stop-reason").textContent()).resolves.toBe("stop: cancelled");
    const status = async () =>
      ((await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ status: string }> }).runs[0]?.status;
    await expect.poll(status, { timeout: 10_000 }).toBe("cancelled");
  });

  it("watches a batch progress to done, with each item's state and verdict", async () => {
    // Signed in and loaded before the batch starts, so the page sees it while it is still active.
    const page = await openConsole("/batches");
    await page.getByRole("heading", { name: "Batches" }).first().waitFor();
    const submitted = await server.api("/batches", {
      method: "POST",
      json: {
        title: "Check three pages",
        subagent_type: "general-purpose",
        max_running_items: 1,
        items: [
          { key: "home", prompt: "check the home page", acceptance_criteria: ["file:/mnt/user-data/outputs/home.md exists"] },
          { key: "docs", prompt: "check the docs page" },
          { key: "blog", prompt: "FAIL on the blog page" },
        ],
      },
    });
    expect(submitted.status).toBe(201);
    await page.reload();
    await page.getByRole("heading", { name: "Check three pages" }).waitFor();
    await expect(page.getByTestId("batch-state").textContent()).resolves.toBe("active");
    await screenshot(page, "batch-running");
    await page
      .getByTestId("batch-state")
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 30_000 });
    await page.getByText("3 of 3 items done").waitFor();
    await expect(page.locator('tr[data-item="home"]').textContent()).resolves.toMatch(/completedUNVERIFIED/);
    await expect(page.locator('tr[data-item="blog"]').textContent()).resolves.toContain("failed");
    await expectAccessible(page, "batches");
    await screenshot(page, "batches");
  });

  it("adds, pauses, resumes and triggers a scheduled task, and shows models and plugins read-only", async () => {
    const page = await openConsole("/schedules");
    await page.getByRole("heading", { name: "Scheduled tasks" }).waitFor();
    await page.getByLabel("Name").fill("Morning digest");
    await page.getByLabel("Prompt").fill("hello, summarise my day");
    await page.getByRole("button", { name: "Add task" }).click();
    const row = page.locator("tr", { hasText: "Morning digest" });
    await row.getByText("0 9 * * 1-5 (UTC)").waitFor();
    await row.getByRole("button", { name: "Pause" }).click();
    await row.getByText("paused").waitFor();
    await row.getByRole("button", { name: "Resume" }).click();
    await row.getByText("active").waitFor();
    await row.getByRole("button", { name: "Run now" }).click();
    await page.getByText("Triggered: the run is starting in the server.").waitFor();
    await expectAccessible(page, "schedules");
    await screenshot(page, "schedules");
    const status = await openConsole("/status");
    await status.getByText("@antler/plugin-console").waitFor();
    await status.getByText("The MCP plugin is not loaded.").waitFor();
    await expectAccessible(status, "status");
  });

  it("reaches every control by keyboard: Tab walks the sections, threads and composer, Enter sends", async () => {
    const page = await openConsole("/threads");
    await page.getByRole("button", { name: "New thread" }).waitFor();
    const focused: string[] = [];
    // Tab until the thread search (the top bar's controls come first), then back one to New thread.
    for (let i = 0; i < 12 && focused.at(-1) !== "Search threads"; i++) {
      await page.keyboard.press("Tab");
      focused.push(String(await page.evaluate("document.activeElement?.placeholder || document.activeElement?.textContent?.trim() || ''")));
    }
    expect(focused).toEqual(expect.arrayContaining(["Threads", "Batches", "Schedules", "Status", "New thread", "Search threads"]));
    await page.keyboard.press("Shift+Tab");
    expect(await page.evaluate("document.activeElement?.textContent?.trim()")).toBe("New thread");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/threads\/[^/]+$/);
    await page.getByLabel("Message", { exact: true }).focus();
    await page.keyboard.type("hello by keyboard");
    await page.keyboard.press("Enter");
    await page.getByText("so you can watch it stream in.").waitFor();
  });
});
