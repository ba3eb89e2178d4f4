import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { seedThreadMessages } from "../../runtime/test/fixtures/seed-thread.js";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, newThread, openSignedIn, PHONE, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const open = (path: string, viewport: { width: number; height: number }) =>
  openSignedIn(browser, `${server.url}${path}`, viewport, (close) => onTestFinished(close));

/** How far the message list is from its end, in pixels. */
const distanceFromEnd = (page: Page) =>
  page.getByRole("log", { name: "Messages" }).evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);

describeWithChromium("readable progress: error cards and jump to latest", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ chunkDelayMs: 5 });
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

  for (const viewport of [DESKTOP, PHONE]) {
    it(`a model failure is an error card with the trace id once, kept after a reload, and Retry asks again (${viewport.width}×${viewport.height})`, async () => {
      const page = await open("/threads", viewport);
      const threadId = await newThread(page);
      await send(page, "a flaky question");
      const card = page.getByTestId("error-card");
      await card.waitFor();
      await card.getByText("503 Service Unavailable").waitFor();
      await page.getByRole("button", { name: "Send", exact: true }).waitFor();
      const runs = (await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ trace_id: string }> };
      const traceId = runs.runs[0]?.trace_id ?? "";
      expect(traceId).not.toBe("");
      await expect(card.getByTestId("error-trace-id").textContent()).resolves.toBe(traceId);
      // Once on the card, nowhere else in the chat, and not drawn as the agent's answer.
      const chatText = (await page.getByRole("log", { name: "Messages" }).textContent()) ?? "";
      expect(chatText.split(traceId).length - 1).toBe(1);
      expect(await page.locator(".msg-ai").count()).toBe(0);
      await expectAccessible(page, `error card at ${viewport.width}px`);

      await page.reload();
      await page.getByTestId("error-card").getByText("503 Service Unavailable").waitFor();
      expect(await page.locator(".msg-ai").count()).toBe(0);

      await page.getByTestId("error-card").getByRole("button", { name: "Retry" }).click();
      await page.locator(".msg-ai").last().getByText("Recovered on retry.").waitFor();
      // The old card stays in the history, without a Retry of its own.
      expect(await page.getByTestId("error-card").count()).toBe(1);
      expect(await page.getByRole("button", { name: "Retry" }).count()).toBe(0);
    });
  }

  it("scrolled up, a 'Jump to latest' button takes the reader to the end, and a message sent from up there brings its answer into view", async () => {
    const created = (await (await server.api("/threads", { method: "POST", json: {} })).json()) as { thread_id: string };
    await seedThreadMessages(server.client, "alice", created.thread_id, 60);
    const page = await open(`/threads/${encodeURIComponent(created.thread_id)}`, PHONE);
    const log = page.getByRole("log", { name: "Messages" });
    await log.getByText("Seeded answer 59:").waitFor();
    const jump = page.getByRole("button", { name: /Jump to latest/ });
    expect(await jump.count()).toBe(0);

    await log.evaluate((el) => {
      el.scrollTop = 0;
    });
    await jump.waitFor();
    await expectAccessible(page, "jump to latest");
    await jump.click();
    await log.getByText("Seeded answer 59:").waitFor();
    await expect.poll(() => distanceFromEnd(page)).toBeLessThan(40);
    await jump.waitFor({ state: "hidden" });

    await log.evaluate((el) => {
      el.scrollTop = 0;
    });
    await jump.waitFor();
    await send(page, "hello from up here");
    await page.locator(".msg-ai").last().getByText("so you can watch it stream in.").waitFor();
    await page.getByTestId("stop-reason").waitFor();
    await expect.poll(() => distanceFromEnd(page)).toBeLessThan(40);
    expect(await page.locator(".msg-human").last().textContent()).toContain("hello from up here");
    await jump.waitFor({ state: "hidden" });
  });
});
