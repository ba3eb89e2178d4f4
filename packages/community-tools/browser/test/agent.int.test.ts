import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadPaths } from "@antler/kernel";
import { createTestKernel, describeWithChromium, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, type SerializedMessage } from "@antler/plugin-runtime";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, expect, it } from "vitest";
import browserPlugin, {
  BROWSER_SESSIONS,
  BrowserErrorCodes,
  type BrowserSessionManager,
  createBrowserPlugin,
  isBrowserError,
} from "../src/index.js";
import { eventually, html, PNG_SIGNATURE, processesWithMarker, runCommand, startSite } from "./fixtures.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** The ref of the first element line containing `pattern` in the latest tool result the model saw. */
function refIn(messages: BaseMessage[], pattern: string): number {
  const last = [...messages].reverse().find((m) => m.getType() === "tool");
  const line = String(last?.content ?? "")
    .split("\n")
    .find((l) => /^\[\d+\] /.test(l) && l.includes(pattern));
  if (!line) throw new Error(`no ${pattern} in the last tool result:\n${String(last?.content)}`);
  return Number(/^\[(\d+)\]/.exec(line)?.[1]);
}

describeWithChromium("@antler/tools-browser in an agent run", (executablePath) => {
  it("drives the browser tools from a scripted model through a real AntlerClient, across turns, and leaves no browser behind", async () => {
    const site = await startSite({
      "/": html(
        `<h1>Guestbook</h1><form method="post" action="/sign"><input name="who" aria-label="Your name"><button>Sign</button></form>`,
        "Guestbook",
      ),
      "/sign": (_req, res) => res.writeHead(303, { location: "/signed" }).end(),
      "/signed": html("<p>Signed, thank you</p>", "Signed"),
    });
    cleanups.push(() => site.close());
    const cwd = mkdtempSync(join(tmpdir(), "antler-browser-agent-"));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const marker = `antler-browser-agent-${randomUUID()}`;

    const turn1: ScriptFunction = (messages, i) => {
      switch (i) {
        case 0:
          return { toolCalls: [{ id: "nav", name: "browser_navigate", args: { url: `${site.origin}/` } }] };
        case 1:
          return {
            toolCalls: [{ id: "type", name: "browser_type", args: { ref: refIn(messages, 'textbox "Your name"'), text: "Grace Hopper" } }],
          };
        case 2:
          return { toolCalls: [{ id: "click", name: "browser_click", args: { ref: refIn(messages, 'button "Sign"') } }] };
        case 3:
          return { toolCalls: [{ id: "shot", name: "browser_screenshot", args: { full_page: true } }] };
        case 4:
          return { toolCalls: [{ id: "stale", name: "browser_click", args: { ref: 1 } }] };
        case 5:
          return { text: "signed the guestbook" };
        case 6:
          return { toolCalls: [{ id: "again", name: "browser_get_text", args: {} }] };
        default:
          return { text: "still there" };
      }
    };
    const scripted = scriptedModelsPlugin({ m: turn1 });
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
      },
      plugins: [
        scripted,
        {
          plugin: browserPlugin,
          config: { executable_path: executablePath, allow_private_addresses: true, extra_args: [`--antler-marker=${marker}`] },
        },
      ],
      cwd,
      env: {},
      discover: false,
    });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await client.close();
    });

    expect(await client.chat("sign the guestbook", { threadId: "g1" })).toBe("signed the guestbook");
    const details = await client.getThread("g1");
    const results = new Map(
      details.messages.filter((m): m is SerializedMessage & { tool_call_id: string } => m.type === "tool").map((m) => [m.tool_call_id, m]),
    );
    expect(results.get("nav")?.content).toContain("Page: Guestbook");
    expect(results.get("type")?.content).toContain('value="Grace Hopper"');
    expect(results.get("click")?.content).toContain("Signed, thank you");
    expect(new URLSearchParams(site.hits.find((h) => h.path === "/sign")?.body).get("who")).toBe("Grace Hopper");

    const shot = results.get("shot");
    expect(shot?.status).toBe("success");
    const virtualPath = /(\/mnt\/user-data\/outputs\/browser\/[^\s;]+\.png)/.exec(String(shot?.content))?.[1];
    expect(virtualPath).toBeDefined();
    expect(details.artifacts).toContain(virtualPath);
    const outputs = threadPaths(client.kernel.paths.baseDir, "default", "g1").outputs;
    const png = readFileSync(join(outputs, (virtualPath as string).slice("/mnt/user-data/outputs/".length)));
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);

    expect(results.get("stale")?.status).toBe("error");
    expect(results.get("stale")?.content).toMatch(/Ref \[1\] is not on the current page.*browser_snapshot/s);

    // The next turn of the same thread finds the session where the last one left it.
    expect(await client.chat("what does the page say now?", { threadId: "g1" })).toBe("still there");
    const again = (await client.getThread("g1")).messages.find((m) => m.type === "tool" && m.tool_call_id === "again");
    expect(again?.content).toContain("Signed, thank you");

    expect(processesWithMarker(marker).length).toBeGreaterThan(0);
    await client.close();
    closed = true;
    expect(await eventually(() => processesWithMarker(marker).length === 0)).toBe(true);
  });

  it("pins a thread's session for the whole kernel run, so another thread cannot evict it mid-task, and closes it all on kernel close", async () => {
    const site = await startSite({ "/": html("<p>busy</p>") });
    cleanups.push(() => site.close());
    const marker = `antler-browser-pin-${randomUUID()}`;
    let manager: BrowserSessionManager | undefined;
    const plugin = createBrowserPlugin({ onManager: (m) => (manager = m) });
    const kernel = await createTestKernel({
      builtins: true,
      plugins: [
        {
          plugin,
          config: {
            executable_path: executablePath,
            allow_private_addresses: true,
            max_sessions: 1,
            extra_args: [`--antler-marker=${marker}`],
          },
        },
      ],
    });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await kernel.close();
    });
    const m = manager as unknown as BrowserSessionManager;
    expect(kernel.scope.resolve(BROWSER_SESSIONS)).toBe(m);
    const visit = (threadId: string) => m.withSession({ userId: "default", threadId }, (s) => s.navigate(`${site.origin}/`));

    const refused = await kernel.run(
      async () => {
        await visit("a"); // the tool call is over, but the run of thread a goes on
        return visit("b").then(
          () => undefined,
          (err: unknown) => err,
        );
      },
      { threadId: "a", userId: "default" },
    );
    expect(isBrowserError(refused, BrowserErrorCodes.SESSION_LIMIT)).toBe(true);
    expect(m.sessions().map((s) => s.threadId)).toEqual(["a"]);

    // Once a's run has ended its session is idle, and b gets the slot.
    await visit("b");
    expect(m.sessions().map((s) => s.threadId)).toEqual(["b"]);

    await kernel.close();
    closed = true;
    expect(m.sessions()).toEqual([]);
    expect(await eventually(() => processesWithMarker(marker).length === 0)).toBe(true);
  });

  it("antler browser check starts the configured Chromium, reports its version and flags, and leaves nothing running", async () => {
    const marker = `antler-browser-check-${randomUUID()}`;
    const kernel = await createTestKernel({
      builtins: true,
      plugins: [{ plugin: browserPlugin, config: { executable_path: executablePath, extra_args: [`--antler-marker=${marker}`] } }],
      start: false,
    });
    cleanups.push(() => kernel.close());
    const result = await runCommand(kernel, "browser check");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Chromium \d+\.\d+\.\d+\.\d+ works \(/);
    expect(result.stdout).toContain("--disable-background-networking");
    expect(await eventually(() => processesWithMarker(marker).length === 0)).toBe(true);
  });
});
