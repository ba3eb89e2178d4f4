import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, expectNoHorizontalScroll, newThread, openSignedIn, PHONE, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

async function ask(page: Page, text: string): Promise<void> {
  await send(page, text);
  await page.getByRole("log", { name: "Messages" }).getByText(`You said: ${text}`, { exact: true }).waitFor();
  await page.getByRole("button", { name: "Send", exact: true }).waitFor();
}

/** The custom agent each run of the thread ran with, oldest first (null: the default agent). */
async function agentsOf(threadId: string): Promise<Array<string | null>> {
  const { runs } = (await (await server.api(`/threads/${threadId}/runs`)).json()) as {
    runs: Array<{ kwargs: { context: { agent_name?: string } } }>;
  };
  return runs.reverse().map((r) => r.kwargs.context.agent_name ?? null);
}

describeWithChromium("the agent picker: custom agents for a new thread and the next run", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ chunkDelayMs: 2 });
    for (const [name, description] of [
      ["researcher", "Digs into sources"],
      ["editor", "Tightens prose"],
    ]) {
      const saved = await server.api(`/agents/${name}`, { method: "PUT", json: { soul: `You are ${name}.`, description } });
      expect(saved.status).toBe(200);
    }
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
    it(`runs a thread with the agent picked, shows it, and opens a thread again on its agent (${size})`, async () => {
      const page = await openSignedIn(browser, `${server.url}/threads`, viewport, (close) => onTestFinished(close));
      const first = await newThread(page);
      const picker = page.getByLabel("Agent");
      const badge = page.getByTestId("thread-agent");
      await picker.waitFor();
      expect((await picker.locator("option").allTextContents()).sort()).toEqual(["Default agent", "editor", "researcher"]);
      expect(await picker.inputValue()).toBe("");
      expect(await badge.count()).toBe(0);

      await picker.selectOption("researcher");
      await ask(page, "find sources");
      expect(await badge.textContent()).toBe("Agent: researcher");
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await expectAccessible(page, `agent picker at ${size}, ${scheme}`);
      }
      await expectNoHorizontalScroll(page, `agent picker at ${size}`);
      expect(await agentsOf(first)).toEqual(["researcher"]);

      // The next run of the same thread takes another agent when one is picked; the header follows.
      await picker.selectOption("editor");
      await ask(page, "now tighten it");
      expect(await badge.textContent()).toBe("Agent: editor");
      expect(await agentsOf(first)).toEqual(["researcher", "editor"]);

      // A new thread starts with the agent picked; the default agent sends no agent at all.
      await page.goto(`${server.url}/threads`);
      const second = await newThread(page);
      await picker.selectOption("");
      await ask(page, "plain question");
      expect(await badge.count()).toBe(0);
      expect(await agentsOf(second)).toEqual([null]);

      // Opened again (another visit), the first thread says its agent and its next run keeps it.
      await page.goto(`${server.url}/threads/${encodeURIComponent(first)}`);
      await badge.waitFor();
      expect(await badge.textContent()).toBe("Agent: editor");
      expect(await picker.inputValue()).toBe("editor");
      await ask(page, "one more pass");
      expect(await agentsOf(first)).toEqual(["researcher", "editor", "editor"]);
    });
  }
});
