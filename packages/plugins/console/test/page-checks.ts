import { mkdirSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { ALICE_KEY, screenshotsDir } from "./harness.js";

export const DESKTOP = { width: 1440, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** A page in its own browser context (its own storage, like another device), signed in with Alice's key. */
export async function openSignedIn(
  browser: Browser,
  url: string,
  viewport: { width: number; height: number },
  onClose: (fn: () => Promise<void>) => void,
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  onClose(() => context.close());
  await signInContext(context, url);
  const page = await context.newPage();
  page.on("dialog", (dialog) => void dialog.accept());
  await page.goto(url);
  return page;
}

/** Signs a browser context in as Alice the way the key form does: the gateway sets the session cookie in it. */
export async function signInContext(context: BrowserContext, url: string): Promise<void> {
  const response = await context.request.post(`${new URL(url).origin}/api/session`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
  if (response.status() !== 201) throw new Error(`sign-in answered ${response.status()}: ${await response.text()}`);
}

/** No serious or critical axe-core violation on what the page shows now. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${screen}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad).toEqual([]);
}

/** The page is no wider than its viewport: nothing to scroll sideways. */
export async function expectNoHorizontalScroll(page: Page, screen: string): Promise<void> {
  const widths = await page.evaluate<{ scroll: number; client: number; body: number }>(
    "({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth, body: document.body.scrollWidth })",
  );
  expect(Math.max(widths.scroll, widths.body), `${screen}: ${JSON.stringify(widths)}`).toBeLessThanOrEqual(widths.client);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotsDir, { recursive: true });
  await page.screenshot({ path: join(screenshotsDir, `${name}.png`) });
}

export async function newThread(page: Page): Promise<string> {
  await page.getByRole("button", { name: "New thread" }).click();
  await page.waitForURL(/\/threads\/[^/]+$/);
  return decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
}

export async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel("Message", { exact: true }).fill(text);
  await page.getByRole("button", { name: "Send", exact: true }).click();
}

/** The answer's text without the "Agent" label and any partial-answer note. */
export async function answerText(page: Page): Promise<string> {
  const answer = page.locator(".msg-ai").last();
  return ((await answer.locator(".markdown").textContent()) ?? "").trim();
}
