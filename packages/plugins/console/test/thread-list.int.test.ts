import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createThreadStore } from "../../runtime/src/stores/threads.js";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, screenshot } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const PAGE = 50; // THREADS_PAGE in web/src/thread-list.tsx
const DAY = 24 * 60 * 60 * 1000;
const now = Date.now();

/** Threads whose last update spans every group, newest first: one each for the day groups, then one every 6 days. */
const threads: Array<{ id: string; title: string; updated: Date }> = [
  { id: "t-today", title: "Planned today", updated: new Date(now - 1000) },
  { id: "t-yesterday", title: "Asked yesterday", updated: new Date(now - DAY) },
  { id: "t-week", title: "Three days back", updated: new Date(now - 3 * DAY) },
  { id: "t-month", title: "Twenty days back", updated: new Date(now - 20 * DAY) },
  ...Array.from({ length: 56 }, (_, i) => ({ id: `t-old-${i}`, title: `Older thread ${i}`, updated: new Date(now - (40 + 6 * i) * DAY) })),
];

const monthName = (d: Date) => d.toLocaleDateString("en-US", { month: "long", year: "numeric", timeZone: "UTC" });

describeWithChromium("the console's thread list", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ authNone: true });
    // Each thread's updated_at is set through the runtime's thread store on the server's own database, by a clock
    // that reads that thread's time.
    expect((await server.api("/threads")).status).toBe(200); // the runtime has made its tables
    const database = await server.client.kernel.openDatabase();
    try {
      for (const t of threads) await createThreadStore(database, { now: () => t.updated }).touch("alice", t.id, { title: t.title });
    } finally {
      await database.close();
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

  it("groups threads by date (today, yesterday, 7 days, 30 days, then by month) and reads more as the list scrolls", async () => {
    const context = await browser.newContext({ viewport: DESKTOP, locale: "en-US", timezoneId: "UTC" });
    const page = await context.newPage();
    const reads: URL[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname === "/api/threads" && request.method() === "GET") reads.push(url);
    });
    await page.goto(`${server.url}/threads`);
    const list = page.getByRole("navigation", { name: "Threads" });
    await list.getByText("Planned today").waitFor();

    // The first page only: 50 of the 60 threads, in date groups, and a way to read more.
    expect(reads.map((u) => [u.searchParams.get("limit"), u.searchParams.get("offset")])).toEqual([[String(PAGE), "0"]]);
    expect(await list.getByRole("link").count()).toBe(PAGE);
    const expectedHeadings = (shown: typeof threads) => {
      const headings = ["Today", "Yesterday", "Previous 7 days", "Previous 30 days"];
      for (const t of shown.slice(4)) if (!headings.includes(monthName(t.updated))) headings.push(monthName(t.updated));
      return headings;
    };
    expect(await list.getByRole("heading").allTextContents()).toEqual(expectedHeadings(threads.slice(0, PAGE)));
    const group = (name: string) => list.getByRole("region", { name });
    expect(await group("Today").getByRole("link").allTextContents()).toEqual([expect.stringContaining("Planned today")]);
    expect(await group("Yesterday").getByRole("link").allTextContents()).toEqual([expect.stringContaining("Asked yesterday")]);
    expect(await group("Previous 7 days").getByRole("link").allTextContents()).toEqual([expect.stringContaining("Three days back")]);
    expect(await group("Previous 30 days").getByRole("link").allTextContents()).toEqual([expect.stringContaining("Twenty days back")]);
    await list.getByRole("button", { name: "Load more threads" }).waitFor();
    await expectAccessible(page, "grouped thread list");
    await screenshot(page, "console-thread-groups");

    // Scrolling to the end of the list reads the next page, after the loaded threads; then there is no more.
    await list.evaluate((nav) => {
      nav.scrollTop = nav.scrollHeight;
    });
    await expect.poll(() => list.getByRole("link").count()).toBe(threads.length);
    expect(reads.map((u) => u.searchParams.get("offset"))).toEqual(["0", String(PAGE)]);
    await list.getByRole("button", { name: "Load more threads" }).waitFor({ state: "detached" });
    const titles = await list.locator(".thread-title").allTextContents();
    expect(titles).toEqual(threads.map((t) => t.title));
    expect(await list.getByRole("heading").allTextContents()).toEqual(expectedHeadings(threads));

    // A new thread comes in at the top from a re-read of the first page, and the older pages stay loaded.
    await page.getByRole("button", { name: "New thread" }).click();
    await page.waitForURL(/\/threads\/[^/]+$/);
    await expect.poll(() => list.getByRole("link").count()).toBe(threads.length + 1);
    expect(await group("Today").getByRole("link").count()).toBe(2);
    expect(reads.map((u) => u.searchParams.get("offset"))).toEqual(["0", String(PAGE), "0"]);
    await context.close();
  });
});
