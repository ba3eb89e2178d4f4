import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, newThread, openSignedIn, PHONE, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

async function ask(page: Page, text: string): Promise<void> {
  await send(page, text);
  await page.getByRole("log", { name: "Messages" }).getByText(`You said: ${text}`, { exact: true }).waitFor();
  await page.getByRole("button", { name: "Send", exact: true }).waitFor();
}

/** What each run of the thread ran with, oldest first: its model and whether it had thinking on. */
async function runsOf(threadId: string): Promise<Array<{ model: string; thinking: unknown }>> {
  const { runs } = (await (await server.api(`/threads/${threadId}/runs`)).json()) as {
    runs: Array<{ model: string; kwargs: { context: { thinking_enabled?: unknown } } }>;
  };
  return runs.reverse().map((r) => ({ model: r.model, thinking: r.kwargs.context.thinking_enabled }));
}

async function accessibleInBothSchemes(page: Page, screen: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectAccessible(page, `${screen}, ${scheme}`);
  }
}

describeWithChromium("thinking on or off, where the model can think", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({
      chunkDelayMs: 2,
      models: [
        { name: "quick", display_name: "Quick" },
        { name: "deep", display_name: "Deep", supports_thinking: true },
      ],
    });
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
    it(`offers Thinking only for a model that can think, sends the choice with the run, and keeps it in the browser (${size})`, async () => {
      const page = await openSignedIn(browser, `${server.url}/threads`, viewport, (close) => onTestFinished(close));
      const threadId = await newThread(page);
      const thinking = page.getByLabel("Thinking", { exact: true });
      const picker = page.getByLabel("Model");
      // The default model (the first, "quick") cannot think: nothing to switch.
      await picker.waitFor();
      expect(await thinking.count()).toBe(0);

      await picker.selectOption("deep");
      expect(await thinking.isChecked()).toBe(true);
      await accessibleInBothSchemes(page, `thinking at ${size}`);
      await ask(page, "think first");
      await thinking.uncheck();
      await ask(page, "answer quickly");
      // The quick model runs without thinking, whatever the box said.
      await picker.selectOption("quick");
      expect(await thinking.count()).toBe(0);
      await ask(page, "no thinking here");
      expect(await runsOf(threadId)).toEqual([
        { model: "deep", thinking: true },
        { model: "deep", thinking: false },
        { model: "quick", thinking: false },
      ]);

      // Kept in the browser: another thread, after a reload, still has it off.
      expect(await page.evaluate("localStorage.getItem('antler.console.thinking')")).toBe("off");
      await page.goto(`${server.url}/threads`);
      const other = await newThread(page);
      await picker.selectOption("deep");
      expect(await thinking.isChecked()).toBe(false);
      await thinking.check();
      await ask(page, "think again");
      expect(await runsOf(other)).toEqual([{ model: "deep", thinking: true }]);
      expect(await page.evaluate("localStorage.getItem('antler.console.thinking')")).toBe("on");
    });
  }

  it("with a custom agent picked, Thinking follows the agent's model and reads the agent's thinking until set", async () => {
    const saved = await server.api("/agents/terse", {
      method: "PUT",
      json: { soul: "Be brief.", description: "Short answers", model: "deep", thinking: false },
    });
    expect(saved.status).toBe(200);
    const page = await openSignedIn(browser, `${server.url}/threads`, DESKTOP, (close) => onTestFinished(close));
    const threadId = await newThread(page);
    const thinking = page.getByLabel("Thinking", { exact: true });
    const agent = page.getByLabel("Agent");
    await agent.waitFor();
    expect(await thinking.count()).toBe(0);
    // The agent runs on "deep", which can think; the agent says off, and the page sends nothing of its own.
    await agent.selectOption("terse");
    expect(await thinking.isChecked()).toBe(false);
    await ask(page, "brief, please");
    await thinking.check();
    await ask(page, "now think it through");
    expect(await runsOf(threadId)).toEqual([
      { model: "deep", thinking: false },
      { model: "deep", thinking: true },
    ]);
  });
});
