import { describeWithChromium } from "@antler/kernel/testing";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { seedThread } from "../../runtime/test/fixtures/seed-thread.js";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, openSignedIn, PHONE } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

const open = (path: string, viewport: { width: number; height: number }) =>
  openSignedIn(browser, `${server.url}${path}`, viewport, (close) => onTestFinished(close));

/** What has the focus: its accessible-ish name (aria-label, else its text, else its id). */
const focused = (page: Page) =>
  page.evaluate<string>(
    "(() => { const el = document.activeElement; return el?.getAttribute('aria-label') || el?.textContent?.trim() || el?.id || ''; })()",
  );

describeWithChromium("the console by keyboard", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer();
    expect((await server.api("/threads", { method: "POST", json: { thread_id: "keys" } })).status).toBe(201);
    await seedThread(server.client, "alice", "keys", [
      new HumanMessage({ id: "h1", content: "Find the release notes" }),
      new AIMessage({ id: "a1", content: "", tool_calls: [{ id: "c1", name: "web_search", args: { query: "release notes" } }] }),
      new ToolMessage({ id: "t1", tool_call_id: "c1", name: "web_search", content: "notes for 2.0" }),
      new AIMessage({ id: "a2", content: "Here are the release notes." }),
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

  for (const [size, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    it(`the first Tab reaches a skip link that takes the focus to the message box, or the page's heading (${size})`, async () => {
      const page = await open("/threads/keys", viewport);
      await page.getByText("Here are the release notes.").waitFor();
      await page.keyboard.press("Tab");
      expect(await focused(page)).toBe("Skip to main content");
      // Hidden until focused, then on screen.
      const box = await page.getByRole("link", { name: "Skip to main content" }).boundingBox();
      expect(box?.y ?? -1).toBeGreaterThanOrEqual(0);
      await page.keyboard.press("Enter");
      expect(await page.evaluate("document.activeElement?.id")).toBe("composer-input");

      await page.goto(`${server.url}/status`);
      await page.getByRole("heading", { name: "Status" }).waitFor();
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      expect(await page.evaluate("document.activeElement?.tagName + ' ' + document.activeElement?.textContent")).toBe("H1 Status");
    });
  }

  it("Escape closes an open tool card, the rename box and a message being edited, focus back on what opened each", async () => {
    const page = await open("/threads/keys", DESKTOP);
    await page.getByText("Here are the release notes.").waitFor();

    // A tool card opened with Enter on its summary closes with Escape.
    const card = page.locator("details.tool").first();
    await card.locator("summary").focus();
    await page.keyboard.press("Enter");
    expect(await card.evaluate((d) => d.hasAttribute("open"))).toBe(true);
    await page.keyboard.press("Escape");
    expect(await card.evaluate((d) => d.hasAttribute("open"))).toBe(false);
    expect(await page.evaluate("document.activeElement?.tagName")).toBe("SUMMARY");

    // Rename: the field takes the focus; Escape leaves it unsaved and gives the focus back to Rename.
    await page.getByRole("button", { name: "Rename" }).focus();
    await page.keyboard.press("Enter");
    expect(await page.evaluate("document.activeElement?.tagName")).toBe("INPUT");
    await page.keyboard.type("Not kept");
    await page.keyboard.press("Escape");
    await page.getByRole("heading", { name: "Untitled thread" }).waitFor();
    expect(await focused(page)).toBe("Rename");

    // Edit a message: the same.
    await page.getByRole("button", { name: "Edit your message and resend" }).focus();
    await page.keyboard.press("Enter");
    expect(await page.evaluate("document.activeElement?.tagName")).toBe("TEXTAREA");
    expect(await page.evaluate("document.activeElement?.value")).toBe("Find the release notes");
    await page.keyboard.press("Escape");
    expect(await focused(page)).toBe("Edit your message and resend");
    expect(await page.getByRole("button", { name: "Send as a new branch" }).count()).toBe(0);
    await expectAccessible(page, "chat after Escape");
  });

  it("the details tabs are one Tab stop: the arrows, Home and End move the selection and the focus", async () => {
    const page = await open("/threads/keys", DESKTOP);
    await page.getByText("Here are the release notes.").waitFor();
    const tabs = page.getByRole("tablist", { name: "Panels" });
    const selected = () => tabs.locator('[aria-selected="true"]').textContent();
    const tabIndexes = () => tabs.getByRole("tab").evaluateAll((all) => all.map((t) => t.getAttribute("tabindex")));
    expect(await tabIndexes()).toEqual(["0", "-1"]);

    await tabs.getByRole("tab", { name: /Artifacts/ }).focus();
    await page.keyboard.press("ArrowRight");
    expect(await selected()).toBe("Timeline");
    expect(await focused(page)).toBe("Timeline");
    expect(await tabIndexes()).toEqual(["-1", "0"]);
    await page.getByRole("tabpanel").getByRole("region", { name: "Run timeline" }).waitFor();
    await page.keyboard.press("ArrowRight"); // wraps
    expect(await focused(page)).toMatch(/^Artifacts/);
    await page.keyboard.press("End");
    expect(await selected()).toBe("Timeline");
    await page.keyboard.press("Home");
    expect(await selected()).toMatch(/^Artifacts/);
    // Shift+Tab from the selected tab leaves the tab list at once: the other tab is not a stop.
    await page.keyboard.press("ArrowLeft");
    expect(await selected()).toBe("Timeline");
    await page.keyboard.press("Shift+Tab");
    expect(await focused(page)).not.toMatch(/^Artifacts/);
    expect(await page.evaluate("document.activeElement?.getAttribute('role')")).not.toBe("tab");
  });

  it("on a phone, Escape closes the details drawer and gives the focus back to Details", async () => {
    const page = await open("/threads/keys", PHONE);
    await page.getByText("Here are the release notes.").waitFor();
    await page.getByRole("button", { name: "Details" }).click();
    const side = page.getByRole("complementary", { name: "Thread details" });
    await side.waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    await side.waitFor({ state: "hidden" });
    expect(await focused(page)).toBe("Details");
  });
});
