import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, newThread, openSignedIn, PHONE, screenshot, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const open = (path: string, viewport: { width: number; height: number }) =>
  openSignedIn(browser, `${server.url}${path}`, viewport, (close) => onTestFinished(close));

const runsOf = async (threadId: string) =>
  ((await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ run_id: string; status: string }> }).runs;

/**
 * Waits for the last answer to show `text`; on a timeout the error says what the run record and the page showed
 * instead, so a failure on a loaded CI machine can be told apart from a slow one.
 */
async function answerShows(page: Page, threadId: string, text: string): Promise<void> {
  try {
    await page.locator(".msg-ai").last().getByText(text).waitFor();
  } catch (e) {
    const runs = await runsOf(threadId).catch((err: unknown) => String(err));
    const answers = await page.locator(".msg-ai").allInnerTexts();
    const problems = await page.getByTestId("approval-problem").allInnerTexts();
    const send = await page
      .getByRole("button", { name: "Send", exact: true })
      .isDisabled()
      .catch(() => "absent");
    throw new Error(
      `${(e as Error).message}\nruns: ${JSON.stringify(runs)}\nanswers: ${JSON.stringify(answers.slice(-3))}\nsend disabled: ${send}\ncard problems: ${JSON.stringify(problems)}`,
    );
  }
}

/** Starts a turn that pauses on `run_command` and waits for its approval card. */
async function pausedTurn(page: Page): Promise<string> {
  const threadId = await newThread(page);
  await send(page, "deploy the site");
  await page.getByTestId("approval-card").waitFor();
  await expect.poll(async () => (await runsOf(threadId))[0]?.status, { timeout: 15_000 }).toBe("paused");
  return threadId;
}

describeWithChromium("tool approvals: the Approve / Edit arguments / Reject card", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ chunkDelayMs: 5, approval: true });
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
    const size = `${viewport.width}×${viewport.height}`;
    it(`a paused run shows its call; the card is back after a reload; bad JSON and a schema error show inline; the edited call runs (${size})`, async () => {
      const page = await open("/threads", viewport);
      const threadId = await pausedTurn(page);
      const card = page.getByTestId("approval-card");
      await card.getByText("run_command").waitFor();
      await card.getByText("Deploys change the live site").waitFor();
      expect(await card.locator("pre").textContent()).toContain('"command": "deploy --prod"');
      expect(await page.getByRole("button", { name: "Send", exact: true }).isDisabled()).toBe(true);
      await expectAccessible(page, `approval card at ${size}`);
      await screenshot(page, viewport === DESKTOP ? "console-approval" : "console-approval-phone");

      await page.reload();
      await page.getByTestId("approval-card").getByText("run_command").waitFor();
      await page.getByRole("button", { name: "Edit arguments" }).click();
      const editor = page.getByLabel("Arguments (JSON)");
      await editor.fill('{"command": ');
      await page.getByTestId("approval-problem").getByText("Not valid JSON").waitFor();
      expect(await page.getByRole("button", { name: "Run with these arguments" }).isDisabled()).toBe(true);
      await editor.fill("[1, 2]");
      await page.getByTestId("approval-problem").getByText("must be a JSON object").waitFor();

      // Valid JSON the tool's schema refuses: the server's message, inline, and the run stays paused.
      await editor.fill('{"command": 5}');
      await page.getByRole("button", { name: "Run with these arguments" }).click();
      await expect
        .poll(async () => (await page.getByTestId("approval-problem").textContent()) ?? "", { timeout: 15_000 })
        .toMatch(/command/);
      expect(await editor.getAttribute("aria-invalid")).toBe("true");
      expect((await runsOf(threadId))[0]?.status).toBe("paused");
      await expectAccessible(page, `approval schema error at ${size}`);
      if (viewport === DESKTOP) await screenshot(page, "console-approval-edit-error");

      await editor.fill('{"command": "deploy --staging"}');
      await page.getByRole("button", { name: "Run with these arguments" }).click();
      await answerShows(page, threadId, 'Command finished: ran "deploy --staging"');
      await expect.poll(async () => (await runsOf(threadId))[0]?.status, { timeout: 15_000 }).toBe("success");
      // The card stays in the history, answered, with no buttons; Send is back.
      await page.getByTestId("approval-card").getByText("answered").waitFor();
      expect(await page.getByRole("button", { name: "Approve", exact: true }).count()).toBe(0);
      await page.getByLabel("Message", { exact: true }).fill("next");
      expect(await page.getByRole("button", { name: "Send", exact: true }).isDisabled()).toBe(false);
    });
  }

  it("Reject with a reason: the agent reads the reason, and the call never runs; Approve runs the next one as asked", async () => {
    const page = await open("/threads", DESKTOP);
    const threadId = await pausedTurn(page);
    // Escape in the reason box goes back to the three choices, with the focus on Reject… again.
    await page.getByRole("button", { name: "Reject…" }).click();
    await page.getByLabel("Reason (the agent reads it)").focus();
    await page.keyboard.press("Escape");
    await page.getByRole("button", { name: "Approve", exact: true }).waitFor();
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Reject…");
    await page.keyboard.press("Enter");
    await page.getByLabel("Reason (the agent reads it)").fill("not on a Friday");
    await expectAccessible(page, "approval reject form");
    await page.getByRole("button", { name: "Reject", exact: true }).click();
    const answer = page.locator(".msg-ai").last();
    await answer.getByText("not on a Friday").waitFor();
    expect(await answer.textContent()).not.toContain('ran "deploy');

    await send(page, "deploy it now");
    await expect.poll(async () => (await runsOf(threadId))[0]?.status, { timeout: 15_000 }).toBe("paused");
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await answerShows(page, threadId, 'Command finished: ran "deploy --prod"');
    await page.reload();
    // After the reload both decisions are in the history and nothing waits.
    await page.locator(".msg-ai").last().getByText('Command finished: ran "deploy --prod"').waitFor();
    expect(await page.getByRole("button", { name: "Approve", exact: true }).count()).toBe(0);
  });
});
