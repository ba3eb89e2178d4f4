import { describeWithChromium } from "@antler/kernel/testing";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { seedThread } from "../../runtime/test/fixtures/seed-thread.js";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, openSignedIn, PHONE, screenshot } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

// The page background of each theme (--bg in styles.css), as getComputedStyle reports it.
const LIGHT_BG = "rgb(246, 247, 249)";
const DARK_BG = "rgb(13, 17, 23)";
const background = (page: Page) => page.evaluate<string>("getComputedStyle(document.documentElement).backgroundColor");

type Scheme = "light" | "dark";

/** Every view of the console, each waited for by what only it shows. */
const VIEWS: Array<{ name: string; path: string; ready(page: Page): Promise<void> }> = [
  { name: "threads", path: "/threads", ready: (p) => p.getByRole("button", { name: "New thread" }).waitFor() },
  { name: "chat", path: "/threads/themed", ready: (p) => p.getByText("The build is green on every target.").waitFor() },
  { name: "batches", path: "/batches", ready: (p) => p.getByRole("heading", { name: "Batches" }).waitFor() },
  { name: "schedules", path: "/schedules", ready: (p) => p.getByRole("heading", { name: "Scheduled tasks" }).waitFor() },
  { name: "status", path: "/status", ready: (p) => p.getByRole("heading", { name: "Status" }).waitFor() },
];

async function openIn(scheme: Scheme, viewport: { width: number; height: number }, path: string): Promise<Page> {
  const page = await openSignedIn(browser, `${server.url}${path}`, viewport, (close) => onTestFinished(close));
  await page.emulateMedia({ colorScheme: scheme });
  return page;
}

describeWithChromium("the console's light and dark themes", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer();
    expect((await server.api("/threads", { method: "POST", json: { thread_id: "themed" } })).status).toBe(201);
    await seedThread(server.client, "alice", "themed", [
      new HumanMessage({ id: "h1", content: "Is the build green?" }),
      new AIMessage({ id: "a1", content: "", tool_calls: [{ id: "c1", name: "web_search", args: { query: "ci status" } }] }),
      new ToolMessage({ id: "t1", tool_call_id: "c1", name: "web_search", content: "all 12 jobs passed" }),
      new AIMessage({
        id: "a2",
        content: "The build is green on every target.\n\n```ts\nconst ok = true; // checked\n```\n\n- `lint` passed",
      }),
    ]);
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

  for (const scheme of ["light", "dark"] as const) {
    for (const [size, viewport] of [
      ["desktop", DESKTOP],
      ["phone", PHONE],
    ] as const) {
      it(`follows a ${scheme} system setting on every view at ${viewport.width}×${viewport.height}, and axe finds nothing serious`, async () => {
        const page = await openIn(scheme, viewport, "/threads");
        for (const view of VIEWS) {
          await page.goto(`${server.url}${view.path}`);
          await view.ready(page);
          expect(await background(page), view.name).toBe(scheme === "dark" ? DARK_BG : LIGHT_BG);
          await expectAccessible(page, `${scheme} ${size} ${view.name}`);
          if (view.name === "chat" || (size === "desktop" && view.name === "batches"))
            await screenshot(page, `console-${scheme}-${size}-${view.name}`);
        }
        // The sign-in form, in a context with no session.
        const context = await browser.newContext({ viewport, colorScheme: scheme });
        onTestFinished(() => context.close());
        const signIn = await context.newPage();
        await signIn.goto(`${server.url}/threads`);
        await signIn.getByLabel("API key").waitFor();
        expect(await background(signIn)).toBe(scheme === "dark" ? DARK_BG : LIGHT_BG);
        await expectAccessible(signIn, `${scheme} ${size} sign-in`);
      });
    }
  }

  it("keeps a pinned theme over the system setting, applies it before the app's script runs, and System follows again", async () => {
    const page = await openIn("light", DESKTOP, "/threads");
    const picker = page.getByRole("combobox", { name: "Theme" });
    await picker.waitFor();
    expect(await picker.inputValue()).toBe("system");
    expect(await background(page)).toBe(LIGHT_BG);

    await picker.selectOption("dark");
    await expect.poll(() => background(page)).toBe(DARK_BG);
    expect(await page.evaluate("localStorage.getItem('antler.console.theme')")).toBe("dark");

    // On the next load the shell's inline script pins it before any bundle runs: with the app's scripts held back,
    // the page is already dark (and the CSP let that inline script run).
    await page.route("**/assets/*.js", (route) => route.abort());
    await page.reload();
    expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
    expect(await background(page)).toBe(DARK_BG);
    expect(await page.locator("#root").innerHTML()).toBe("");
    await page.unroute("**/assets/*.js");

    await page.reload();
    await picker.waitFor();
    expect(await picker.inputValue()).toBe("dark");
    await picker.selectOption("light");
    await page.emulateMedia({ colorScheme: "dark" });
    await expect.poll(() => background(page)).toBe(LIGHT_BG);

    // Back to System: the page follows the setting, live, and forgets the pin.
    await picker.selectOption("system");
    await expect.poll(() => background(page)).toBe(DARK_BG);
    await page.emulateMedia({ colorScheme: "light" });
    await expect.poll(() => background(page)).toBe(LIGHT_BG);
    expect(await page.evaluate("localStorage.getItem('antler.console.theme')")).toBeNull();
    expect(await page.evaluate("document.documentElement.dataset.theme ?? null")).toBeNull();
  });
});
