import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { threadPaths } from "@antler/kernel";
import { describeWithChromium, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, type SerializedMessage } from "@antler/plugin-runtime";
import { type BaseMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import type { Command } from "@langchain/langgraph";
import { afterEach, expect, it } from "vitest";
import {
  BROWSER_SESSIONS,
  BrowserSessionManager,
  browserConfigSchema,
  createBrowserPlugin,
  createWebCaptureTool,
  type BrowserSessionManager as Manager,
} from "../src/index.js";
import { html, PNG_SIGNATURE, startSite, type TestSite } from "./fixtures.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function site(): Promise<TestSite> {
  const s = await startSite({
    "/old": (_req, res) => res.writeHead(302, { location: "/page" }).end(),
    "/page": html(
      `<h1 style="color:#c00">Quarterly chart</h1><form method="post" action="/act"><button autofocus>Do not press</button></form>`,
      "Capture me",
    ),
    "/act": html("<p>pressed</p>"),
  });
  cleanups.push(() => s.close());
  return s;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "antler-capture-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The data-URL images of the hidden message the ViewImage middleware added to this model call. */
function imagesShown(messages: BaseMessage[]): Buffer[] {
  const last = messages.at(-1);
  if (!last || !HumanMessage.isInstance(last) || !Array.isArray(last.content)) return [];
  return last.content
    .filter((b): b is { type: "image_url"; image_url: { url: string } } => (b as { type?: string }).type === "image_url")
    .map((b) => Buffer.from(b.image_url.url.replace(/^data:image\/png;base64,/, ""), "base64"));
}

describeWithChromium("web_capture against real Chromium", (executablePath) => {
  it("captures a page in a fresh context: PNG attachment, title and final URL, shown to a vision model, nothing clicked or left open", async () => {
    const s = await site();
    const cwd = tempDir();
    let manager: Manager | undefined;
    const seen: Buffer[][] = [];
    const script: ScriptFunction = (messages, i) => {
      if (i === 0) return { toolCalls: [{ id: "cap", name: "web_capture", args: { url: `${s.origin}/old` } }] };
      seen.push(imagesShown(messages));
      return { text: "a red heading" };
    };
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "eyes", provider: "scripted", supports_vision: true }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
      },
      plugins: [
        scriptedModelsPlugin({ eyes: script }),
        {
          plugin: createBrowserPlugin({ onManager: (m) => (manager = m) }),
          config: { executable_path: executablePath, allow_private_addresses: true },
        },
      ],
      cwd,
      env: {},
      discover: false,
    });
    cleanups.push(() => client.close());

    expect(await client.chat("what does the page look like?", { threadId: "c1" })).toBe("a red heading");
    const details = await client.getThread("c1");
    const result = details.messages.find((m): m is SerializedMessage => m.type === "tool" && m.tool_call_id === "cap");
    expect(result?.status).toBe("success");
    const text = String(result?.content);
    expect(text).toContain(`Captured ${s.origin}/page`);
    expect(text).toContain('Title: "Capture me"');
    const virtualPath = /(\/mnt\/user-data\/outputs\/browser\/capture-[^\s]+\.png)/.exec(text)?.[1] as string;
    expect(details.artifacts).toContain(virtualPath);
    const outputs = threadPaths(client.kernel.paths.baseDir, "default", "c1").outputs;
    const png = readFileSync(join(outputs, virtualPath.slice("/mnt/user-data/outputs/".length)));
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    // The model saw exactly that image on its next call.
    expect(seen).toHaveLength(1);
    expect(seen[0]?.map((b) => b.equals(png))).toEqual([true]);
    // Read-only: the button was never pressed; and the capture's context is gone, no thread session was made.
    expect(s.hits.map((h) => `${h.method} ${h.path}`)).toEqual(["GET /old", "GET /page"]);
    expect(manager?.sessions()).toEqual([]);
    expect(client.kernel.scope.resolve(BROWSER_SESSIONS)).toBe(manager);
  });

  it("refuses an unsafe URL with the SSRF guard's reason before the browser loads it; a model without vision gets no image", async () => {
    const s = await site();
    const baseDir = tempDir();
    const make = (allowPrivate: boolean) => {
      const m = new BrowserSessionManager({
        config: browserConfigSchema.parse({ executable_path: executablePath, allow_private_addresses: allowPrivate }),
      });
      cleanups.push(() => m.close());
      return createWebCaptureTool({ manager: m, baseDir, showToModel: false });
    };
    const call = async (tool: ReturnType<typeof make>, url: string) =>
      (await tool.invoke(
        { type: "tool_call", id: "c", name: "web_capture", args: { url } },
        { context: { thread_id: "t1", user_id: "u1" } },
      )) as ToolMessage | Command;

    const guarded = make(false);
    for (const url of [`${s.origin}/page`, "http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"]) {
      const refused = (await call(guarded, url)) as ToolMessage;
      expect(refused.status, url).toBe("error");
      expect(String(refused.content), url).toMatch(
        /^Error: Navigation to .* was refused by the SSRF guard: .+\. The browser opens only public http\(s\) sites\.$/,
      );
    }
    expect(s.hits).toEqual([]);

    const allowed = (await call(make(true), `${s.origin}/page`)) as Command;
    const update = allowed.update as Record<string, unknown>;
    expect(update.viewed_images).toBeUndefined();
    expect(update.artifacts).toEqual([expect.stringMatching(/^\/mnt\/user-data\/outputs\/browser\/capture-.+\.png$/)]);
    expect(String((update.messages as ToolMessage[])[0]?.content)).not.toContain("attached to your next model call");
  });
});
