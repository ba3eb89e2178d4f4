import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { consoleConfigSchema } from "../src/index.js";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, expectNoHorizontalScroll, newThread, openSignedIn, PHONE, screenshot } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const SUGGESTIONS = [
  "Summarise my week",
  { title: "Plan a trip", prompt: "Help me plan a three-day city break, with one museum a day and no early starts." },
];

const suggestions = (page: Page) => page.getByRole("region", { name: "Suggestions" });

describeWithChromium("suggestions on an empty thread, from the console's config", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ chunkDelayMs: 2, consoleConfig: { suggestions: SUGGESTIONS } });
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
    for (const scheme of ["light", "dark"] as const) {
      const size = `${viewport.width}×${viewport.height}, ${scheme}`;
      it(`shows the configured prompts on an empty thread; a click sends that prompt as the first message (${size})`, async () => {
        const page = await openSignedIn(browser, `${server.url}/threads`, viewport, (close) => onTestFinished(close));
        await page.emulateMedia({ colorScheme: scheme });
        const threadId = await newThread(page);
        const cards = suggestions(page).getByRole("button");
        await cards.first().waitFor();
        expect(await cards.allInnerTexts()).toEqual([
          "Summarise my week",
          "Plan a trip\nHelp me plan a three-day city break, with one museum a day and no early starts.",
        ]);
        await expectAccessible(page, `suggestions at ${size}`);
        await expectNoHorizontalScroll(page, `suggestions at ${size}`);
        if (viewport === DESKTOP && scheme === "light") await screenshot(page, "console-suggestions");

        await cards.filter({ hasText: "Plan a trip" }).click();
        const prompt = SUGGESTIONS[1] as { prompt: string };
        await page.getByRole("log", { name: "Messages" }).getByText(`You said: ${prompt.prompt}`, { exact: true }).waitFor();
        // Gone once the thread has a message: they are for starting one.
        expect(await suggestions(page).count()).toBe(0);
        const runs = ((await (await server.api(`/threads/${threadId}/runs`)).json()) as { runs: Array<{ kwargs: { input: string } }> })
          .runs;
        expect(runs.map((r) => r.kwargs.input)).toEqual([prompt.prompt]);

        // A thread with messages does not offer them when it is opened again.
        await page.reload();
        await page.getByRole("log", { name: "Messages" }).getByText(`You said: ${prompt.prompt}`, { exact: true }).waitFor();
        expect(await suggestions(page).count()).toBe(0);
      });
    }
  }

  it("a suggestion that is neither a string nor { title, prompt } is refused, with its path", () => {
    const parsed = consoleConfigSchema.safeParse({ suggestions: [{ text: "hello" }] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["suggestions", 0]);
  });
});
