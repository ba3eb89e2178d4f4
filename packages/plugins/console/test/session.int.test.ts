import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { ALICE_KEY, type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, PHONE, screenshot } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

describeWithChromium("sign-in that lasts: a session cookie for every tab and deep link", (executablePath) => {
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
    const size = `${viewport.width}×${viewport.height}`;
    it(`a deep link asks for the key once; other tabs and deep links then open signed in; sign-out ends it everywhere (${size})`, async () => {
      const created = (await (await server.api("/threads", { method: "POST", json: {} })).json()) as { thread_id: string };
      await server.api(`/threads/${created.thread_id}/runs/wait`, {
        method: "POST",
        json: { input: { messages: [{ role: "user", content: "hello" }] } },
      });
      const context = await browser.newContext({ viewport });
      onTestFinished(() => context.close());
      const deepLink = `${server.url}/threads/${encodeURIComponent(created.thread_id)}`;

      const first = await context.newPage();
      await first.goto(deepLink);
      await first.getByLabel("API key").waitFor();
      await expectAccessible(first, `sign-in at ${size}`);
      if (viewport === PHONE) await screenshot(first, "console-sign-in-phone");
      await first.getByLabel("API key").fill(ALICE_KEY);
      await first.getByRole("button", { name: "Sign in" }).click();
      // The deep link opens where it pointed, after sign-in.
      await first.getByRole("log", { name: "Messages" }).getByText("Hello from the scripted model.").waitFor();
      expect(new URL(first.url()).pathname).toBe(`/threads/${encodeURIComponent(created.thread_id)}`);

      // A new tab on another section and a second deep link: signed in, no key asked.
      const second = await context.newPage();
      await second.goto(`${server.url}/schedules`);
      await second
        .getByRole("heading", { name: /Schedule/ })
        .first()
        .waitFor();
      expect(await second.getByLabel("API key").count()).toBe(0);
      const third = await context.newPage();
      await third.goto(deepLink);
      await third.getByRole("log", { name: "Messages" }).getByText("Hello from the scripted model.").waitFor();
      expect(await third.getByLabel("API key").count()).toBe(0);
      await expectAccessible(third, `deep link signed in at ${size}`);

      // The cookie as the browser holds it; after sign-out the gateway refuses it even if someone kept a copy.
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: "antler_session", httpOnly: true, sameSite: "Strict" });
      const withCookie = () => fetch(`${server.url}/api/threads`, { headers: { cookie: `${cookie?.name}=${cookie?.value}` } });
      expect((await withCookie()).status).toBe(200);

      await third.getByRole("button", { name: "Sign out" }).click();
      await third.getByLabel("API key").waitFor();
      expect(await context.cookies()).toEqual([]);
      expect((await withCookie()).status).toBe(401);
      await second.reload();
      await second.getByLabel("API key").waitFor();
    });
  }

  it("a session past its lifetime asks for the key again, and the server refuses a kept copy of its cookie", async () => {
    const short = await startConsoleServer({ chunkDelayMs: 5, sessionTtlSeconds: 1 });
    onTestFinished(() => short.close());
    const context = await browser.newContext({ viewport: DESKTOP });
    onTestFinished(() => context.close());
    const page = await context.newPage();
    await page.goto(`${short.url}/threads`);
    await page.getByLabel("API key").fill(ALICE_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "New thread" }).waitFor();
    const [cookie] = await context.cookies();
    // The browser keeps the cookie for its Max-Age at most; the server refuses a kept copy after the same time.
    await page.waitForTimeout(1200);
    await page.reload();
    await page.getByLabel("API key").waitFor();
    const late = await fetch(`${short.url}/api/threads`, { headers: { cookie: `${cookie?.name}=${cookie?.value}` } });
    expect(late.status).toBe(401);
    expect(((await late.json()) as { error: { message: string } }).error.message).toBe("the session has expired or was signed out");
  });
});
