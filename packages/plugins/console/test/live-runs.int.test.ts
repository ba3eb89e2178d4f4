import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { type ConsoleServer, LONG_STORY, startConsoleServer } from "./harness.js";
import { answerText, DESKTOP, expectAccessible, newThread, openSignedIn, PHONE, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const open = (path: string, viewport: { width: number; height: number }) =>
  openSignedIn(browser, `${server.url}${path}`, viewport, (close) => onTestFinished(close));

/** The run is on screen as a live one: its partial answer, the running badge, Cancel in place of Send. */
async function expectLiveRun(page: Page): Promise<void> {
  await page.locator(".badge-running").waitFor();
  await page.getByRole("button", { name: "Cancel run" }).waitFor();
  expect(await page.getByRole("button", { name: "Send", exact: true }).count()).toBe(0);
}

/** The story ends on screen whole: every word once, in order, no gap, and the question asked once. */
async function expectWholeStory(page: Page): Promise<void> {
  await page
    .locator(".msg-ai")
    .last()
    .getByText(/word60$/)
    .waitFor({ timeout: 30_000 });
  expect(await answerText(page)).toBe(LONG_STORY);
  await page.getByTestId("stop-reason").filter({ hasText: "stop: end_turn" }).waitFor();
  expect(await page.locator(".msg-human").filter({ hasText: "tell me a long story" }).count()).toBe(1);
  expect(await page.locator(".msg-ai").count()).toBe(1);
  await page.getByRole("button", { name: "Send", exact: true }).waitFor();
}

describeWithChromium("a live run belongs to its thread, not to the tab that started it", (executablePath) => {
  beforeAll(async () => {
    // 60 words, 150 ms apart: about nine seconds of answer, time enough to reload or open it elsewhere mid-way.
    server = await startConsoleServer({ chunkDelayMs: 150 });
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
    it(`a reload mid-answer shows the partial answer and continues it with no gap or duplicate (${viewport.width}×${viewport.height})`, async () => {
      const page = await open("/threads", viewport);
      if (viewport === PHONE) await page.getByRole("button", { name: "New thread" }).waitFor();
      await newThread(page);
      await send(page, "tell me a long story");
      await page
        .locator(".msg-ai")
        .last()
        .getByText(/word4\b/)
        .waitFor();
      await page.reload();
      // After the reload the page knows nothing of the run but the thread: it finds the run and joins it.
      await page
        .locator(".msg-ai")
        .last()
        .getByText(/word1\b/)
        .waitFor();
      await expectLiveRun(page);
      expect(LONG_STORY.startsWith(await answerText(page))).toBe(true);
      await expectAccessible(page, `joined run after reload at ${viewport.width}px`);
      await expectWholeStory(page);
    });
  }

  it("a second browser context, signed in on its own, opens the thread mid-run and sees the same live answer", async () => {
    const desktop = await open("/threads", DESKTOP);
    const threadId = await newThread(desktop);
    await send(desktop, "tell me a long story");
    await desktop
      .locator(".msg-ai")
      .last()
      .getByText(/word4\b/)
      .waitFor();
    const phone = await open(`/threads/${encodeURIComponent(threadId)}`, PHONE);
    await phone
      .locator(".msg-ai")
      .last()
      .getByText(/word1\b/)
      .waitFor();
    await expectLiveRun(phone);
    expect(LONG_STORY.startsWith(await answerText(phone))).toBe(true);
    await Promise.all([expectWholeStory(desktop), expectWholeStory(phone)]);
  });

  it("a message sent from a tab that did not know the thread was busy goes back into the box, and the tab joins the run", async () => {
    const first = await open("/threads", DESKTOP);
    const threadId = await newThread(first);
    const second = await open(`/threads/${encodeURIComponent(threadId)}`, DESKTOP);
    await second.getByRole("button", { name: "Send", exact: true }).waitFor();
    await send(first, "tell me a long story");
    await first
      .locator(".msg-ai")
      .last()
      .getByText(/word2\b/)
      .waitFor();
    await send(second, "hello, are you there?");
    await expectLiveRun(second);
    expect(await second.getByLabel("Message", { exact: true }).inputValue()).toBe("hello, are you there?");
    expect(await second.locator(".msg-human").filter({ hasText: "hello, are you there?" }).count()).toBe(0);
    expect(await second.getByText(/ANTLER_ERR_THREAD_BUSY/).count()).toBe(0);
    await expectWholeStory(second);
  });

  it("while a run holds the thread, a message can wait for it (Send when done) or interrupt it (Interrupt and send)", async () => {
    const page = await open("/threads", DESKTOP);
    const threadId = await newThread(page);
    const box = page.getByLabel("Message", { exact: true });
    await send(page, "tell me a long story");
    await page
      .locator(".msg-ai")
      .last()
      .getByText(/word2\b/)
      .waitFor();
    await box.fill("hello when you are done");
    await page.getByRole("button", { name: "Send when done" }).click();
    await page.getByTestId("queued").getByText("hello when you are done").waitFor();
    expect(await page.getByRole("button", { name: "Interrupt and send" }).isDisabled()).toBe(true);
    // The story ends whole, then the queued message goes and is answered.
    await page.locator(".msg-ai").last().getByText("so you can watch it stream in.").waitFor({ timeout: 30_000 });
    expect(await page.locator(".msg-ai").first().locator(".markdown").textContent()).toBe(LONG_STORY);
    expect(await page.locator(".msg-human > p").allTextContents()).toEqual(["tell me a long story", "hello when you are done"]);
    expect(await page.getByTestId("queued").count()).toBe(0);
    await page.getByRole("button", { name: "Send", exact: true }).waitFor();

    await send(page, "tell me a long story");
    await page
      .locator(".msg-ai")
      .last()
      .getByText(/word2\b/)
      .waitFor();
    await box.fill("hello instead");
    await page.getByRole("button", { name: "Interrupt and send" }).click();
    await page.getByText("Run cancelled.").waitFor();
    await page.getByTestId("partial-note").filter({ hasText: "cancelled" }).waitFor();
    await page.locator(".msg-ai").last().getByText("so you can watch it stream in.").waitFor();
    await page.getByTestId("stop-reason").filter({ hasText: "stop: end_turn" }).waitFor();
    const statuses = ((await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ status: string }> }).runs.map(
      (r) => r.status,
    );
    expect(statuses).toEqual(["success", "cancelled", "success", "success"]);
  });

  it("a cancelled answer is kept and marked as partial, in the tab and after a reload", async () => {
    const page = await open("/threads", DESKTOP);
    const threadId = await newThread(page);
    await send(page, "tell me a long story");
    await page
      .locator(".msg-ai")
      .last()
      .getByText(/word3\b/)
      .waitFor();
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.getByText("Run cancelled.").waitFor();
    await page.getByTestId("partial-note").filter({ hasText: "cancelled" }).waitFor();
    const partial = await answerText(page);
    expect(partial).toMatch(/^word1 word2 word3/);
    expect(partial).not.toBe(LONG_STORY);
    const status = async () =>
      ((await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ status: string }> }).runs[0]?.status;
    await expect.poll(status, { timeout: 10_000 }).toBe("cancelled");

    await page.reload();
    await page.getByTestId("partial-note").filter({ hasText: "cancelled" }).waitFor();
    expect(await answerText(page)).toBe(partial);
    await page.getByText("Run cancelled.").waitFor();
    expect(await page.locator(".msg-human").filter({ hasText: "tell me a long story" }).count()).toBe(1);
    await page.getByRole("button", { name: "Send", exact: true }).waitFor();
    await expectAccessible(page, "cancelled run after reload");
  });
});
