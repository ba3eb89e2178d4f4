// The useChat page (pages/ai-sdk, `@ai-sdk/react`) in Chromium against a live gateway: built with Vite, served
// from the gateway's origin, driven like a user would: send, watch the answer stream in, see a tool call as a
// card, stop a run (its Antler record ends `cancelled`), reload mid-run and see the page rejoin it (`resume: true`).
import { describeWithChromium } from "@antler/kernel/testing";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { expectAnswerGrowing, LOOKUP_ANSWER, type PageUnderTest, screenshot, send, threadOf, usePageUnderTest } from "./pages-harness.js";

let pages: PageUnderTest;
const openChat = (thread?: string) => pages.open(thread);
const answer = (page: Page) => page.locator('article[data-role="assistant"]').last();

async function runIdOf(page: Page): Promise<string> {
  await answer(page).and(page.locator("[data-run-id]")).waitFor();
  return (await answer(page).getAttribute("data-run-id")) ?? "";
}

describeWithChromium("the useChat page (@ai-sdk/react) against a live gateway", (executablePath) => {
  pages = usePageUnderTest("ai-sdk", executablePath);

  it("sends a message and shows the answer growing word by word until the run ends", async () => {
    const page = await openChat();
    await send(page, "tell me a story");
    await page.locator('article[data-role="user"]').getByText("tell me a story").waitFor();
    await expectAnswerGrowing(answer(page));
    await screenshot(page, "protocols-ai-sdk-streaming");
    await answer(page)
      .getByText(/\bword60\b/)
      .waitFor();
    await page.getByTestId("status").getByText("ready").waitFor();
    const runId = await runIdOf(page);
    expect((await pages.server.client.getRun(threadOf(page), runId, { userId: "alice" })).status).toBe("success");
    await page.context().close();
  });

  it("shows a tool call as a card with its input and output, then the answer", async () => {
    const page = await openChat();
    await send(page, "please look up antler");
    const card = answer(page).getByTestId("tool-card");
    await card.and(page.locator('[data-tool="lookup"]')).waitFor();
    await card.and(page.locator('[data-state="output-available"]')).waitFor();
    expect(await card.textContent()).toContain('"word": "antler"');
    expect(await card.getByTestId("tool-output").textContent()).toContain("a branched bone that deer grow");
    await answer(page).getByText(LOOKUP_ANSWER).waitFor();
    await page.getByTestId("status").getByText("ready").waitFor();
    await screenshot(page, "protocols-ai-sdk-tool-call");
    await page.context().close();
  });

  it("stops a run mid-stream: the text stops growing and the Antler run ends cancelled", async () => {
    const page = await openChat();
    await send(page, "a long story please");
    await answer(page)
      .getByText(/\bword2\b/)
      .waitFor();
    const runId = await runIdOf(page);
    const cancelled = page.waitForRequest((r) => r.method() === "DELETE" && r.url().endsWith(`/ai-sdk/chat/${threadOf(page)}/stream`));
    await page.getByRole("button", { name: "Stop" }).click();
    await cancelled;
    await page.getByTestId("status").getByText("ready").waitFor();
    await expect.poll(async () => (await pages.server.client.getRun(threadOf(page), runId, { userId: "alice" })).status).toBe("cancelled");
    expect(await answer(page).textContent()).not.toContain("word60");
    await page.getByTestId("stopped").waitFor();
    await screenshot(page, "protocols-ai-sdk-stopped");
    await page.context().close();
  });

  it("reloads mid-run and rejoins the running run (resume: true), which then finishes on the page", async () => {
    const page = await openChat();
    await send(page, "the story again");
    await answer(page)
      .getByText(/\bword3\b/)
      .waitFor();
    const runId = await runIdOf(page);
    const thread = threadOf(page);
    const resumed = page.waitForRequest(
      (r) => r.method() === "GET" && new URL(r.url()).pathname === `/ai-sdk/chat/${encodeURIComponent(thread)}/stream`,
    );
    await page.reload();
    await resumed;
    // The same thread, the earlier user message from the thread's history, and the run's answer streaming again.
    expect(threadOf(page)).toBe(thread);
    await page.locator('article[data-role="user"]').getByText("the story again").waitFor();
    await answer(page)
      .getByText(/\bword5\b/)
      .waitFor();
    const rejoined = (await answer(page).textContent()) ?? "";
    expect(rejoined).not.toContain("word60");
    expect(await answer(page).getAttribute("data-run-id")).toBe(runId);
    await screenshot(page, "protocols-ai-sdk-rejoined");
    await answer(page)
      .getByText(/\bword60\b/)
      .waitFor();
    expect((await pages.server.client.getRun(thread, runId, { userId: "alice" })).status).toBe("success");
    await page.context().close();
  });
});
