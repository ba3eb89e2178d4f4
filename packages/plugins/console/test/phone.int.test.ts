import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { expectAccessible, expectNoHorizontalScroll, newThread, openSignedIn, PHONE, screenshot, send } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const open = (path: string, viewport: { width: number; height: number }) =>
  openSignedIn(browser, `${server.url}${path}`, viewport, (close) => onTestFinished(close));

describeWithChromium("the console on a phone", (executablePath) => {
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

  it("at 390×844 the chat takes the width, the thread list and the details are drawers, and axe finds nothing serious", async () => {
    const page = await open("/threads", PHONE);
    // No thread open: the thread list is the page.
    await page.getByRole("button", { name: "New thread" }).waitFor();
    await expectNoHorizontalScroll(page, "thread list");
    await expectAccessible(page, "phone thread list");
    await newThread(page);
    await send(page, "hello there");
    await page.locator(".msg-ai").last().getByText("so you can watch it stream in.").waitFor();
    await page.getByTestId("stop-reason").waitFor();

    // The chat column is the screen's width, less its padding; the list and the side panel are out of the way.
    const chat = await page.getByRole("region", { name: "Chat" }).boundingBox();
    expect(chat?.width ?? 0).toBeGreaterThanOrEqual(PHONE.width - 20);
    expect(await page.getByRole("navigation", { name: "Threads" }).isVisible()).toBe(false);
    expect(await page.getByRole("complementary", { name: "Thread details" }).isVisible()).toBe(false);
    await expectNoHorizontalScroll(page, "chat");
    await expectAccessible(page, "phone chat");
    await screenshot(page, "console-phone");

    // The thread list slides in over the chat, and Escape closes it.
    await page.getByRole("button", { name: "Show threads" }).click();
    const threads = page.getByRole("navigation", { name: "Threads" });
    await threads.waitFor({ state: "visible" });
    // Focus moves into the drawer, and back to the button that opened it when it closes.
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("New thread");
    await expectAccessible(page, "phone thread drawer");
    await expectNoHorizontalScroll(page, "thread drawer");
    await page.keyboard.press("Escape");
    await threads.waitFor({ state: "hidden" });
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe("Show threads");

    // The details drawer holds the artifacts and timeline tabs; its Close button gives the chat back.
    await page.getByRole("button", { name: "Details" }).click();
    const details = page.getByRole("complementary", { name: "Thread details" });
    await details.waitFor({ state: "visible" });
    await details.getByRole("tab", { name: "Timeline" }).waitFor();
    await expect.poll(() => page.evaluate("document.activeElement?.textContent")).toBe("Close");
    await expectAccessible(page, "phone details drawer");
    await details.getByRole("button", { name: "Close" }).click();
    await details.waitFor({ state: "hidden" });

    // Picking a thread from the drawer opens it and closes the drawer.
    await page.getByRole("button", { name: "Show threads" }).click();
    await threads
      .getByRole("link", { name: /Untitled thread/ })
      .first()
      .click();
    await threads.waitFor({ state: "hidden" });
  });

  it("at 360 px every section fits the screen with no sideways scroll, and Sign out is readable", async () => {
    const narrow = { width: 360, height: 740 };
    const page = await open("/threads", narrow);
    await page.getByRole("button", { name: "New thread" }).waitFor();
    const signOut = page.getByRole("button", { name: "Sign out" });
    // Inside the dark top bar, not spilled past it onto the light page (axe's contrast check sees the rest).
    const [bar, button] = await Promise.all([page.locator("header.top").boundingBox(), signOut.boundingBox()]);
    expect(button && bar && button.x + button.width <= bar.x + bar.width && button.y + button.height <= bar.y + bar.height).toBe(true);
    for (const [path, ready] of [
      ["/batches", "Batches"],
      ["/schedules", "Schedules"],
      ["/status", "Status"],
    ] as const) {
      await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: ready }).click();
      await page.waitForURL(new RegExp(`${path}$`));
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await expectNoHorizontalScroll(page, path);
      await expectAccessible(page, `${path} at 360px`);
    }
  });
});
