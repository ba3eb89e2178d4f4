// The useStream page (pages/langgraph, `@langchain/langgraph-sdk/react`) in Chromium against a live gateway: built
// with Vite, served from the gateway's origin, driven like a user would: send, watch the answer stream in, see a
// tool call as a card, answer an interrupt (ask_clarification) so the run resumes with `command: { resume }`, stop
// a run (its Antler record ends `cancelled`), reload mid-run and see the page rejoin it (`reconnectOnMount`).
import { describeWithChromium } from "@antler/kernel/testing";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { expectAnswerGrowing, LOOKUP_ANSWER, type PageUnderTest, screenshot, send, threadOf, usePageUnderTest } from "./pages-harness.js";

let pages: PageUnderTest;
const openChat = (thread?: string) => pages.open(thread);
const answer = (page: Page) => page.locator('article[data-role="ai"]').last();
const status = (page: Page) => page.getByTestId("status");

/** The run the page streams (from useStream's onCreated, or the id it keeps to rejoin). */
async function runIdOf(page: Page): Promise<string> {
  await status(page).and(page.locator("[data-run-id]")).waitFor();
  return (await status(page).getAttribute("data-run-id")) ?? "";
}

const runStatus = async (thread: string, runId: string) => (await pages.server.client.getRun(thread, runId, { userId: "alice" })).status;

describeWithChromium("the useStream page (@langchain/langgraph-sdk/react) against a live gateway", (executablePath) => {
  pages = usePageUnderTest("langgraph", executablePath);

  it("sends a message on a new thread and shows the answer growing word by word until the run ends", async () => {
    const page = await openChat();
    await send(page, "tell me a story");
    await page.locator('article[data-role="human"]').getByText("tell me a story").waitFor();
    await expectAnswerGrowing(answer(page));
    // useStream created the thread (POST /threads) and the page keeps its id in the URL.
    expect(threadOf(page)).not.toBe("");
    await screenshot(page, "protocols-langgraph-streaming");
    await answer(page)
      .getByText(/\bword60\b/)
      .waitFor();
    await status(page).getByText("idle").waitFor();
    expect(await runStatus(threadOf(page), await runIdOf(page))).toBe("success");
    await page.context().close();
  });

  it("shows a tool call as a card with its input and result, then the answer", async () => {
    const page = await openChat();
    await send(page, "please look up antler");
    const card = page.locator('[data-testid="tool-card"][data-tool="lookup"]');
    await card.and(page.locator('[data-state="completed"]')).waitFor();
    expect(await card.textContent()).toContain('"word": "antler"');
    expect(await card.getByTestId("tool-output").textContent()).toContain("a branched bone that deer grow");
    await answer(page).getByText(LOOKUP_ANSWER).waitFor();
    await status(page).getByText("idle").waitFor();
    await screenshot(page, "protocols-langgraph-tool-call");
    await page.context().close();
  });

  it("answers an interrupt (ask_clarification) from the form: the run resumes with command.resume and finishes", async () => {
    const page = await openChat();
    await send(page, "which colour for the chart?");
    const form = page.getByTestId("interrupt");
    await form.getByText("Which colour should the chart use?").waitFor();
    await status(page).getByText("waiting for you").waitFor();
    await screenshot(page, "protocols-langgraph-interrupt");
    // The answer goes back as LangGraph's resume command, not as a new message.
    const resumed = page.waitForRequest(
      (r) => r.method() === "POST" && r.url().endsWith("/runs/stream") && r.postDataJSON()?.command?.resume === "green",
    );
    await form.getByRole("button", { name: "green" }).click();
    await resumed;
    await page.getByText("Painting the chart green now.").waitFor();
    await status(page).getByText("idle").waitFor();
    expect(await form.count()).toBe(0);
    expect(await runStatus(threadOf(page), await runIdOf(page))).toBe("success");
    await screenshot(page, "protocols-langgraph-resumed");
    await page.context().close();
  });

  it("reloads while a question waits: the form is back (from the thread's state) and answering it finishes the turn", async () => {
    const page = await openChat();
    await send(page, "pick a colour");
    await page.getByTestId("interrupt").getByText("Which colour should the chart use?").waitFor();
    await page.reload();
    const form = page.getByTestId("interrupt");
    await form.getByText("Which colour should the chart use?").waitFor();
    await form.getByLabel("Answer").fill("blue");
    await form.getByRole("button", { name: "Answer" }).click();
    await page.getByText("Painting the chart blue now.").waitFor();
    await status(page).getByText("idle").waitFor();
    await page.context().close();
  });

  it("stops a run mid-stream: the Antler run ends cancelled and the page shows the thread as the server kept it", async () => {
    const page = await openChat();
    await send(page, "a long story please");
    await answer(page)
      .getByText(/\bword2\b/)
      .waitFor();
    const runId = await runIdOf(page);
    await page.getByRole("button", { name: "Stop" }).click();
    await status(page).getByText("idle").waitFor();
    await expect.poll(() => runStatus(threadOf(page), runId)).toBe("cancelled");
    await page.getByTestId("stopped").waitFor();
    // After a stop useStream shows what the server kept (as LangGraph's own server does): the cut-off answer was
    // never checkpointed, so the thread holds the question and no answer, and the story never completes.
    await page.locator('article[data-role="human"]').getByText("a long story please").waitFor();
    expect(await page.locator(".messages").textContent()).not.toContain("word60");
    await screenshot(page, "protocols-langgraph-stopped");
    await page.context().close();
  });

  it("reloads mid-run and rejoins the running run (reconnectOnMount), which then finishes on the page", async () => {
    const page = await openChat();
    await send(page, "the story again");
    await answer(page)
      .getByText(/\bword3\b/)
      .waitFor();
    const runId = await runIdOf(page);
    const thread = threadOf(page);
    const joined = page.waitForRequest((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith(`/runs/${runId}/stream`));
    await page.reload();
    await joined;
    expect(threadOf(page)).toBe(thread);
    // The same run, joined again: the earlier message from the thread's state, the answer growing again.
    await page.locator('article[data-role="human"]').getByText("the story again").waitFor();
    await answer(page)
      .getByText(/\bword5\b/)
      .waitFor();
    expect(await answer(page).textContent()).not.toContain("word60");
    expect(await runIdOf(page)).toBe(runId);
    await status(page).getByText("running").waitFor();
    await screenshot(page, "protocols-langgraph-rejoined");
    await answer(page)
      .getByText(/\bword60\b/)
      .waitFor();
    await status(page).getByText("idle").waitFor();
    expect(await runStatus(thread, runId)).toBe("success");
    await page.context().close();
  });
});
