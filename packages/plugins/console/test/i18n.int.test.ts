import { describeWithChromium } from "@antler/kernel/testing";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { seedThread } from "../../runtime/test/fixtures/seed-thread.js";
import { type ConsoleServer, startConsoleServer } from "./harness.js";
import { DESKTOP, expectAccessible, PHONE, screenshot, signInContext } from "./page-checks.js";

let server: ConsoleServer;
let browser: Browser;

/** A signed-in page in a browser whose language is `locale` (what navigator.languages reports). */
async function openIn(locale: string, viewport: { width: number; height: number }, path: string): Promise<Page> {
  const context = await browser.newContext({ viewport, locale });
  onTestFinished(() => context.close());
  await signInContext(context, server.url);
  const page = await context.newPage();
  await page.goto(`${server.url}${path}`);
  return page;
}

describeWithChromium("the console in English and Chinese", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer();
    expect((await server.api("/threads", { method: "POST", json: { thread_id: "bilingual" } })).status).toBe(201);
    await seedThread(server.client, "alice", "bilingual", [
      new HumanMessage({ id: "h1", content: "总结一下这个项目" }),
      new AIMessage({ id: "a1", content: "这个项目是一个智能体内核。" }),
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
    it(`a browser set to Chinese gets the Chinese UI on every view, with lang="zh-CN" (${size}), and axe finds nothing serious`, async () => {
      const page = await openIn("zh-CN", viewport, "/threads/bilingual");
      await page.getByText("这个项目是一个智能体内核。").waitFor();
      expect(await page.evaluate("document.documentElement.lang")).toBe("zh-CN");
      const sections = page.getByRole("navigation", { name: "栏目" });
      expect(await sections.getByRole("link").allTextContents()).toEqual(["对话", "批处理", "定时任务", "状态"]);
      await page.getByRole("button", { name: "重命名", exact: true }).waitFor();
      await page.getByRole("button", { name: "发送", exact: true }).waitFor();
      expect(await page.getByLabel("消息", { exact: true }).getAttribute("placeholder")).toBe(
        "给智能体发消息（Enter 发送，Shift+Enter 换行）",
      );
      await page.getByText("智能体", { exact: true }).waitFor();
      await expectAccessible(page, `zh ${size} chat`);
      await screenshot(page, `console-zh-${size}-chat`);
      for (const [path, ready] of [
        ["/threads", page.getByRole("button", { name: "新建对话" })],
        ["/batches", page.getByRole("heading", { name: "批处理", exact: true })],
        ["/schedules", page.getByRole("heading", { name: "定时任务", exact: true })],
        ["/status", page.getByRole("heading", { name: "状态", exact: true })],
      ] as const) {
        await page.goto(`${server.url}${path}`);
        await ready.waitFor();
        await expectAccessible(page, `zh ${size} ${path}`);
      }
      // No English left on the page's own words (the seeded thread's text is Chinese too).
      const english = await page.evaluate<string[]>(
        `[...document.querySelectorAll("main, header, nav")].flatMap((el) => el.innerText.match(/\\b(Threads|Batches|Schedules|Status|Models|Plugins|Sign out|New thread)\\b/g) ?? [])`,
      );
      expect(english).toEqual([]);
    });
  }

  it("checks a human input form in Chinese: its refusals are in the page's language, the field labels as the agent wrote them", async () => {
    const page = await openIn("zh-CN", DESKTOP, "/threads");
    await page.getByRole("button", { name: "新建对话" }).click();
    await page.waitForURL(/\/threads\/[^/]+$/);
    await page.getByLabel("消息", { exact: true }).fill("plan a trip");
    await page.getByRole("button", { name: "发送", exact: true }).click();
    const card = page.locator("section.ask");
    await card.getByLabel("Travellers *").fill("two");
    await card.getByRole("button", { name: "发送答案" }).click();
    await card.getByText("Destination 为必填项").waitFor();
    await card.getByText("Travellers 必须是数字").waitFor();
    await card.getByText("请为 Pace 选择一项").waitFor();
    await card.getByText("请修正标记的字段。").waitFor();
    await expectAccessible(page, "zh human input form");
  });

  it("switches language from the top bar, keeps the choice over the browser's, and an English browser gets English", async () => {
    const page = await openIn("en-US", DESKTOP, "/threads");
    const picker = page.getByRole("combobox", { name: "Language" });
    await picker.waitFor();
    expect(await picker.inputValue()).toBe("en");
    await page.getByRole("button", { name: "New thread" }).waitFor();

    await picker.selectOption("zh");
    await page.getByRole("button", { name: "新建对话" }).waitFor();
    expect(await page.evaluate("document.documentElement.lang")).toBe("zh-CN");
    expect(await page.evaluate("localStorage.getItem('antler.console.lang')")).toBe("zh");
    await page.reload();
    await page.getByRole("button", { name: "新建对话" }).waitFor();
    await screenshot(page, "console-zh-threads");

    await page.getByRole("combobox", { name: "语言" }).selectOption("en");
    await page.getByRole("button", { name: "New thread" }).waitFor();
    await page.reload();
    await page.getByRole("button", { name: "New thread" }).waitFor();
  });
});
