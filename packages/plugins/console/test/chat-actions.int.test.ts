import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, newThread, openSignedIn, PHONE, screenshot, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const open = (path: string, viewport: { width: number; height: number }) =>
  openSignedIn(browser, `${server.url}${path}`, viewport, (close) => onTestFinished(close));

const log = (page: Page) => page.getByRole("log", { name: "Messages" });
const threadIdOf = (page: Page) => decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");

/** Sends `text` and waits for the scripted echo and the end of the run. */
async function ask(page: Page, text: string): Promise<void> {
  await send(page, text);
  await log(page).getByText(`You said: ${text}`, { exact: true }).waitFor();
  await page.getByRole("button", { name: "Send", exact: true }).waitFor();
}

const savedTexts = async (threadId: string) =>
  (
    (await (await server.api(`/threads/${threadId}/state?messages_limit=all`)).json()) as { messages: Array<{ content: string }> }
  ).messages.map((m) => m.content);

describeWithChromium("chat actions: copy, rename, model picker, regenerate, edit and resend", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ chunkDelayMs: 2, secondModel: true });
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
    it(`copies an answer, renames the thread, and runs the next message on the model picked (${size})`, async () => {
      const page = await open("/threads", viewport);
      await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
      const threadId = await newThread(page);
      await ask(page, "plan the weekend");
      await page.getByRole("button", { name: "Copy the answer" }).click();
      await page.getByRole("button", { name: "Copied", exact: true }).waitFor();
      expect(await page.evaluate("navigator.clipboard.readText()")).toBe("You said: plan the weekend");

      await page.getByRole("button", { name: "Rename" }).click();
      await page.getByLabel("Thread title").fill("Weekend plans");
      await expectAccessible(page, `rename at ${size}`);
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("heading", { name: "Weekend plans" }).waitFor();
      expect(((await (await server.api(`/threads/${threadId}`)).json()) as { title: string }).title).toBe("Weekend plans");

      const picker = page.getByLabel("Model");
      expect(await picker.locator("option").allTextContents()).toEqual(["Default", "scripted", "Scripted B"]);
      await picker.selectOption("scripted-b");
      await expectAccessible(page, `model picker at ${size}`);
      await ask(page, "and on Sunday?");
      const runs = ((await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ model: string }> }).runs;
      expect(runs.map((r) => r.model)).toEqual(["scripted-b", "scripted"]);
      if (viewport === DESKTOP) await screenshot(page, "console-chat-actions");
    });

    it(`edit and resend makes a new branch from that message; both branches stay readable (${size})`, async () => {
      const page = await open("/threads", viewport);
      const original = await newThread(page);
      await ask(page, "first question");
      await ask(page, "second question");
      await page.getByRole("button", { name: "Edit your message and resend" }).last().click();
      const editor = page.getByLabel("Edit your message", { exact: true });
      expect(await editor.inputValue()).toBe("second question");
      await editor.fill("second question, edited");
      await expectAccessible(page, `edit message at ${size}`);
      await page.getByRole("button", { name: "Send as a new branch" }).click();

      await page.waitForURL((url) => !url.pathname.endsWith(encodeURIComponent(original)));
      await log(page).getByText("You said: second question, edited", { exact: true }).waitFor();
      const branch = threadIdOf(page);
      await page.getByTestId("branch-note").waitFor();
      expect(await log(page).getByText("You said: second question", { exact: true }).count()).toBe(0);
      await expectAccessible(page, `branch at ${size}`);
      if (viewport === DESKTOP) await screenshot(page, "console-branch");
      await expect
        .poll(() => savedTexts(branch), { timeout: 15_000 })
        .toEqual(["first question", "You said: first question", "second question, edited", "You said: second question, edited"]);

      // The original, one click away, still holds its own second turn.
      await page.getByTestId("branch-note").getByRole("link", { name: "the original thread" }).click();
      await log(page).getByText("You said: second question", { exact: true }).waitFor();
      expect(threadIdOf(page)).toBe(original);
      expect(await log(page).getByText("second question, edited").count()).toBe(0);
      expect(await savedTexts(original)).toEqual([
        "first question",
        "You said: first question",
        "second question",
        "You said: second question",
      ]);
    });
  }

  it("Regenerate asks the last question again in a new branch, leaving the first answer in the original", async () => {
    const page = await open("/threads", DESKTOP);
    const original = await newThread(page);
    await ask(page, "tell me something");
    await page.getByRole("button", { name: "Regenerate the answer as a new branch" }).click();
    await page.waitForURL((url) => !url.pathname.endsWith(encodeURIComponent(original)));
    await log(page).getByText("You said: tell me something", { exact: true }).waitFor();
    await page.getByTestId("branch-note").waitFor();
    const branch = threadIdOf(page);
    await expect.poll(() => savedTexts(branch), { timeout: 15_000 }).toEqual(["tell me something", "You said: tell me something"]);
    expect(await savedTexts(original)).toEqual(["tell me something", "You said: tell me something"]);
  });
});
