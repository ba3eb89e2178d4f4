import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { threadPaths } from "@antler/kernel";
import { describeWithChromium } from "@antler/kernel/testing";
import { type Browser, type BrowserContext, chromium, type Response } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ConsoleServer, startConsoleServer } from "./harness.js";

// Issue 26, G1: with `auth.mode: none` the gateway's only credential is being reachable, and the browser of
// anyone who runs it can reach loopback. These tests visit pages from other origins in a real Chromium and
// check what Chromium actually sends is refused, while the console the gateway serves keeps working.

const REBIND_HOST = "rebind.test";

let server: ConsoleServer;
let attacker: Server;
let attackerUrl: string;
let browser: Browser;

/** Every request a page of another origin can make without a CORS preflight, plus reads; results in window.__results. */
function attackPage(gateway: string): string {
  const threads = `${gateway}/api/threads`;
  const secret = `${threads}/secret`;
  return `<!doctype html><meta charset="utf-8"><title>a page on another origin</title>
<iframe name="sink-text"></iframe><iframe name="sink-urlencoded"></iframe><iframe name="sink-multipart"></iframe>
<form id="text" method="POST" enctype="text/plain" action="${threads}" target="sink-text">
  <input name='{"thread_id":"planted-form-text","x":"' value='"}'>
</form>
<form id="urlencoded" method="POST" action="${threads}" target="sink-urlencoded">
  <input name="thread_id" value="planted-form-urlencoded">
</form>
<form id="multipart" method="POST" enctype="multipart/form-data" action="${secret}/uploads" target="sink-multipart">
  <input type="file" name="files">
</form>
<script>
window.__results = {};
window.__attack = async () => {
  const r = window.__results;
  const attempt = async (name, fn) => { try { r[name] = await fn(); } catch (e) { r[name] = "error: " + e.message; } };
  const file = new DataTransfer();
  file.items.add(new File(["planted by another page"], "planted-form.txt", { type: "text/plain" }));
  document.querySelector("#multipart input").files = file.files;
  for (const id of ["text", "urlencoded", "multipart"]) document.getElementById(id).submit();
  await attempt("fetch-text", () => fetch("${threads}", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: JSON.stringify({ thread_id: "planted-fetch" }) }).then((x) => x.type));
  await attempt("fetch-run", () => fetch("${secret}/runs/wait", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: JSON.stringify({ message: "run a command" }) }).then((x) => x.type));
  const form = new FormData();
  form.append("files", new Blob(["planted by another page"]), "planted-fetch.txt");
  await attempt("fetch-upload", () => fetch("${secret}/uploads", { method: "POST", mode: "no-cors", body: form }).then((x) => x.type));
  r.beacon = navigator.sendBeacon("${threads}", new Blob([JSON.stringify({ thread_id: "planted-beacon" })], { type: "text/plain" }));
  await attempt("delete", () => fetch("${secret}", { method: "DELETE" }).then((x) => x.status));
  await attempt("read-cors", () => fetch("${secret}").then((x) => x.text()));
  await attempt("read-no-cors", () => fetch("${secret}", { mode: "no-cors" }).then((x) => x.type + ":" + x.status));
  return r;
};
</script>`;
}

/** Records every response the gateway sent to `context` (Chromium sees them even when the page may not). */
function gatewayResponses(context: BrowserContext, origin: string): Response[] {
  const seen: Response[] = [];
  context.on("response", (response) => {
    if (response.url().startsWith(origin)) seen.push(response);
  });
  return seen;
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeWithChromium("a key-less gateway (auth.mode none) visited by pages of other origins, in Chromium", (executablePath) => {
  beforeAll(async () => {
    server = await startConsoleServer({ authNone: true, chunkDelayMs: 5 });
    await server.api("/threads", { method: "POST", json: { thread_id: "secret", metadata: { note: "private" } } });
    // The attacker: another loopback origin (same host, another port), the closest a web page gets.
    attacker = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(attackPage(server.url));
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // A DNS name that answers 127.0.0.1: what a rebinding attacker's name does after its short TTL.
        `--host-resolver-rules=MAP ${REBIND_HOST} 127.0.0.1`,
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()));
    await server?.close();
  });

  it("a page on another loopback port cannot create a thread, upload, run a turn or delete, and cannot read a thread", async () => {
    const context = await browser.newContext();
    const responses = gatewayResponses(context, server.url);
    const page = await context.newPage();
    await page.goto(`${attackerUrl}/`);
    const results = (await page.evaluate("window.__attack()")) as Record<string, unknown>;
    // Each write reached the gateway (so the refusal is the gateway's, not a browser rule) and was refused.
    const writes = () => responses.filter((r) => r.request().method() === "POST");
    await waitFor(() => writes().length >= 7, "the seven cross-site POSTs to reach the gateway");
    for (const response of writes()) expect(`${response.status()} ${response.url()}`).toMatch(/^403 /);
    // The DELETE needs a preflight, which is refused, so the DELETE itself is never sent.
    expect(responses.filter((r) => r.request().method() === "DELETE")).toEqual([]);
    expect(String(results.delete)).toMatch(/^error: /);
    // Reads: no CORS headers, so a cors read fails and a no-cors read is opaque; the thread never reaches the page.
    expect(String(results["read-cors"])).toMatch(/^error: /);
    expect(results["read-no-cors"]).toBe("opaque:0");
    expect(JSON.stringify(results)).not.toContain("private");
    for (const response of responses) expect(response.headers()["access-control-allow-origin"]).toBeUndefined();

    const threads = await server.client.listThreads({ userId: "alice" });
    expect(threads.map((t) => t.thread_id)).toEqual(["secret"]);
    expect(await server.client.listRuns("secret", { userId: "alice" })).toEqual([]);
    expect(readdirOrEmpty(threadPaths(server.baseDir, "alice", "secret").uploads)).toEqual([]);
    await context.close();
  });

  it("a page on a DNS name rebound to 127.0.0.1 gets 421 for every read and write, never the thread", async () => {
    const context = await browser.newContext();
    const { port } = new URL(server.url);
    const rebound = `http://${REBIND_HOST}:${port}`;
    // After rebinding, the attacker's origin and the gateway share an address. The page is opened on that
    // address (Chromium keeps a page served from elsewhere from fetching loopback on its own, a browser rule
    // this test does not lean on), so every request below reaches the gateway under the attacker's name.
    const page = await context.newPage();
    const opened = await page.goto(`${rebound}/`);
    expect(opened?.status()).toBe(421);
    const answers = (await page.evaluate(`(async () => {
      const read = await fetch("/api/threads/secret");
      const list = await fetch("/api/threads");
      const write = await fetch("/api/threads", { method: "POST", headers: { "content-type": "application/json" }, body: '{"thread_id":"planted-rebind"}' });
      return [[read.status, await read.text()], [list.status, await list.text()], [write.status, await write.text()]];
    })()`)) as Array<[number, string]>;
    for (const [status, body] of answers) {
      expect(status).toBe(421);
      expect(JSON.parse(body).error.code).toBe("ANTLER_ERR_GATEWAY_HOST_NOT_ALLOWED");
      expect(body).not.toContain("private");
    }
    expect((await server.client.listThreads({ userId: "alice" })).map((t) => t.thread_id)).toEqual(["secret"]);
    await context.close();
  });

  it("the console the gateway serves still creates a thread, runs a turn, uploads and deletes (same origin)", async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    const responses = gatewayResponses(context, server.url);
    const page = await context.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    await page.goto(`${server.url}/`);
    await page.getByRole("button", { name: "New thread" }).click();
    await page.waitForURL(/\/threads\/[^/]+$/);
    const threadId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    await page.getByLabel("Message", { exact: true }).fill("hello");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await page.getByText("Hello from the scripted model.", { exact: false }).first().waitFor();
    await page
      .locator('input[type="file"]')
      .first()
      .setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("mine") });
    await waitFor(() => readdirOrEmpty(threadPaths(server.baseDir, "alice", threadId).uploads).includes("notes.txt"), "the upload");
    const runs = await server.client.listRuns(threadId, { userId: "alice" });
    expect(runs.length).toBe(1);
    const before = (await server.client.listThreads({ userId: "alice" })).length;
    await page
      .getByRole("button", { name: /Delete thread/ })
      .first()
      .click();
    await waitFor(() => responses.some((r) => r.request().method() === "DELETE"), "the DELETE");
    expect(responses.find((r) => r.request().method() === "DELETE")?.status()).toBe(200);
    expect((await server.client.listThreads({ userId: "alice" })).length).toBe(before - 1);
    const refused = responses.filter((r) => r.status() === 403 || r.status() === 415 || r.status() === 421);
    expect(refused.map((r) => `${r.status()} ${r.request().method()} ${r.url()}`)).toEqual([]);
    await context.close();
  });
});

function readdirOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
