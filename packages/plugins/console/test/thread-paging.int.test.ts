import { describeWithChromium } from "@antler/kernel/testing";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { seedThread } from "../../runtime/test/fixtures/seed-thread.js";
import { type ConsoleServer, startConsoleServer } from "./harness.js";

let server: ConsoleServer;
let browser: Browser;

const COUNT = 1000;
const PAGE = 100; // MESSAGES_PAGE in web/src/chat.tsx

/** `COUNT` saved messages: questions, answers, and every third answer a tool call with its result. */
function savedMessages(): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let i = 0; messages.length < COUNT; i++) {
    messages.push(new HumanMessage({ id: `h${i}`, content: `Question number ${i}: what about item ${i}?` }));
    if (i % 3 === 0) {
      messages.push(
        new AIMessage({ id: `a${i}`, content: "", tool_calls: [{ id: `c${i}`, name: "web_search", args: { query: `item ${i}` } }] }),
      );
      messages.push(new ToolMessage({ id: `t${i}`, tool_call_id: `c${i}`, name: "web_search", content: `results for item ${i}` }));
    } else {
      messages.push(new AIMessage({ id: `a${i}`, content: `Answer ${i}: item ${i} is fine.` }));
    }
  }
  return messages.slice(0, COUNT);
}

/** The row a message is drawn in (a tool result joins its call's card). */
function rowKey(m: BaseMessage): string {
  if (HumanMessage.isInstance(m)) return `human:${m.id}`;
  if (ToolMessage.isInstance(m)) return `tool:${m.tool_call_id}`;
  const call = (m as AIMessage).tool_calls?.[0];
  return call && !m.text ? `tool:${call.id}` : `ai:${m.id}`;
}

/** The rows the console draws for them: one per question, per answer with text, per tool call (its result joins it). */
function expectedRows(messages: readonly BaseMessage[]): number {
  let rows = 0;
  for (const m of messages) {
    if (HumanMessage.isInstance(m)) rows++;
    else if (AIMessage.isInstance(m)) rows += (m.text ? 1 : 0) + (m.tool_calls?.length ?? 0);
  }
  return rows;
}

describeWithChromium("opening a long thread in the console", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ authNone: true });
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

  it("reads the last page, then earlier pages as the reader scrolls up, until the first message, each message once", async () => {
    expect((await server.api("/threads", { method: "POST", json: { thread_id: "paged" } })).status).toBe(201);
    const messages = savedMessages();
    await seedThread(server.client, "alice", "paged", messages);
    const page = await (await browser.newContext({ viewport: { width: 1360, height: 860 } })).newPage();
    const reads: Array<{ url: URL; messages: number; offset: number }> = [];
    page.on("response", async (response) => {
      const url = new URL(response.url());
      if (url.pathname !== "/api/threads/paged/state") return;
      const body = (await response.json()) as { messages: unknown[]; messages_offset: number };
      reads.push({ url, messages: body.messages.length, offset: body.messages_offset });
    });
    await page.goto(`${server.url}/threads/paged`);

    // It opens at the bottom, on the last page only.
    const lastQuestion = (messages.filter((m) => HumanMessage.isInstance(m)).at(-1)?.text ?? "").slice(0, 30);
    await page.getByText(lastQuestion).waitFor();
    await expect.poll(() => reads.length).toBeGreaterThan(0);
    expect(reads[0]?.url.searchParams.get("messages_limit")).toBe(String(PAGE));
    expect(reads[0]?.url.searchParams.has("before")).toBe(false);
    expect(reads[0]?.messages).toBe(PAGE);
    expect(Number(await page.locator(".vlist").getAttribute("data-rows"))).toBeLessThan(PAGE);
    expect(await page.getByText("Question number 0:").count()).toBe(0);

    // At the top of the last page, the page before comes in above it and what was on screen stays on screen.
    const firstKey = rowKey(messages[COUNT - PAGE] as BaseMessage);
    await page.evaluate(`document.querySelector(".vlist").scrollTop = 0`);
    await expect.poll(() => reads.length).toBe(2);
    await page.waitForTimeout(300);
    const anchored = await page.evaluate(`(() => {
      const list = document.querySelector(".vlist").getBoundingClientRect();
      const row = document.querySelector('.vrow[data-key="${firstKey}"]');
      if (!row) return { shown: false, scrollTop: document.querySelector(".vlist").scrollTop, rows: document.querySelector(".vlist").dataset.rows, keys: [...document.querySelectorAll(".vrow")].map((r) => r.dataset.key).slice(0, 5) };
      const box = row.getBoundingClientRect();
      return { shown: box.bottom > list.top && box.top < list.bottom, scrollTop: document.querySelector(".vlist").scrollTop };
    })()`);
    expect(anchored, JSON.stringify(anchored)).toMatchObject({ shown: true });

    // Scrolling up loads the page before, each one just before what is loaded, until the first message is on screen.
    const reachedFirst = await page.evaluate(`(async () => {
      const list = document.querySelector(".vlist");
      const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
      for (let i = 0; i < 600; i++) {
        list.scrollTop = Math.max(0, list.scrollTop - 400);
        await frame();
        if (list.textContent.includes("Question number 0:")) return true;
      }
      return false;
    })()`);
    expect(reachedFirst).toBe(true);
    const older = reads.slice(1);
    expect(older.length).toBe(Math.ceil((COUNT - PAGE) / PAGE));
    older.forEach((read, i) => {
      const before = Number(read.url.searchParams.get("before"));
      expect(before).toBe((i === 0 ? reads[0] : older[i - 1])?.offset);
      expect(read.messages).toBeLessThanOrEqual(PAGE);
    });
    expect(older.at(-1)?.offset).toBe(0);
    // Every message became exactly one row: a tool call and its result on two pages still make one card.
    expect(Number(await page.locator(".vlist").getAttribute("data-rows"))).toBe(expectedRows(messages));
    const keys = await page.locator(".vrow").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key")));
    expect(new Set(keys).size).toBe(keys.length);
    expect(await page.getByText("Earlier messages load as you scroll up.").count()).toBe(0);
  });
});
