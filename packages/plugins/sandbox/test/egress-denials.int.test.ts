import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, type Sandbox, type SandboxProvider } from "@antler/kernel";
import { type Script, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, checkpointThreadId, INTERNAL_PRINCIPAL, type SerializedMessage } from "@antler/plugin-runtime";
import { SidecarEgressControl } from "@antler/sandbox-aio";
import { type RunningSidecar, startSidecar } from "@antler/sandbox-aio/sidecar";
import { LocalSandboxProvider } from "@antler/sandbox-local";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import sandboxPlugin from "../src/index.js";

const TOKEN = "egress-test-token-0123456789";
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A real sidecar on loopback, and a provider plugin whose sandboxes are real local sandboxes carrying that
 * sidecar's egress control: `bash` runs curl through the sidecar's proxy, so denials are real refusals.
 */
type Curl = (host: string) => { id: string; name: string; args: { description: string; command: string } };

async function world(makeScript: (curl: Curl) => Script) {
  const upstream: Server = createServer((_req, res) => res.end("aio"));
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise<void>((r) => upstream.close(() => r())));
  const sidecar: RunningSidecar = await startSidecar({
    token: TOKEN,
    upstream: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
    host: "127.0.0.1",
    proxyPort: 0,
    relayPort: 0,
    policy: { label: "research", allow: ["pypi.org"], ports: [80, 443] },
    resolve: async () => {
      throw new Error("no DNS in this test");
    },
  });
  cleanups.push(() => sidecar.close());
  const egress = new SidecarEgressControl(`http://127.0.0.1:${sidecar.relayPort}`, TOKEN);
  const provider = definePlugin({
    name: "test-restricted-local",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      const inner = new LocalSandboxProvider({ baseDir: ctx.paths.baseDir });
      const withEgress = (s: Sandbox): Sandbox =>
        ({
          id: s.id,
          executeCommand: (c, o) => s.executeCommand(c, o),
          readFile: (p, o) => s.readFile(p, o),
          downloadFile: (p) => s.downloadFile(p),
          listDir: (p, d) => s.listDir(p, d),
          writeFile: (p, c, o) => s.writeFile(p, c, o),
          glob: (p, o) => s.glob(p, o),
          grep: (p, o) => s.grep(p, o),
          updateFile: (p, b) => s.updateFile(p, b),
          egress,
        }) as Sandbox;
      const p: SandboxProvider = {
        id: "restricted-local",
        isolated: true,
        acquire: async (threadId, options) => withEgress(await inner.acquire(threadId, options)),
        get: (id) => {
          const s = inner.get(id);
          return s ? withEgress(s) : undefined;
        },
        release: (id) => inner.release(id),
        reset: () => inner.reset(),
        close: () => inner.close(),
      };
      ctx.sandbox.addProvider(p);
    },
  });
  const dir = mkdtempSync(join(tmpdir(), "antler-egress-test-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const curl: Curl = (host) => ({
    id: `curl-${host}`,
    name: "bash",
    args: {
      description: "fetch",
      command: `curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:${sidecar.proxyPort} http://${host}/`,
    },
  });
  const scripted = scriptedModelsPlugin({ m: makeScript(curl) });
  const saver = new MemorySaver();
  const client = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      logging: { level: "warn" },
      sandbox: { provider: "restricted-local" },
    },
    plugins: [scripted, provider, sandboxPlugin],
    cwd: dir,
    env: {},
    discover: false,
    checkpointer: saver,
  });
  cleanups.push(() => client.close());
  return {
    client,
    sidecar,
    messages: async (thread: string) => (await client.getThread(thread)).messages as SerializedMessage[],
    state: async (thread: string) => {
      const tuple = await saver.getTuple({ configurable: { thread_id: checkpointThreadId("default", thread), checkpoint_ns: "" } });
      return (tuple?.checkpoint.channel_values ?? {}) as Record<string, unknown>;
    },
  };
}

const toolMessages = (messages: SerializedMessage[], name: string) => messages.filter((m) => m.type === "tool" && m.name === name);

describe("egress denials of a restricted sandbox reach the user", () => {
  it("an interactive run surfaces the denial as a clarification and ends the turn; an approval updates the policy and does not re-run the tool", async () => {
    const w = await world((curl) => [{ toolCalls: [curl("blocked.example")] }, { text: "Allowed; I can retry the download now." }]);
    await w.client.chat("download it", { threadId: "t1" });
    const afterFirst = await w.messages("t1");
    const bash = toolMessages(afterFirst, "bash");
    expect(bash).toHaveLength(1);
    expect(String(bash[0]?.content)).toContain("403");
    const asks = toolMessages(afterFirst, "ask_clarification");
    expect(asks).toHaveLength(1);
    expect(String(asks[0]?.content)).toMatch(/tried to reach blocked\.example:80/);
    expect(afterFirst.at(-1)?.name).toBe("ask_clarification");
    expect((await w.state("t1")).egress_request).toMatchObject({ status: "asked", host: "blocked.example", port: 80 });
    expect(w.sidecar.policy().allow).toEqual(["pypi.org"]);

    expect(await w.client.chat("Allow", { threadId: "t1" })).toBe("Allowed; I can retry the download now.");
    expect(w.sidecar.policy().allow).toEqual(["pypi.org", "blocked.example"]);
    const afterSecond = await w.messages("t1");
    // The tool ran once, in the first turn: the approval replayed nothing.
    expect(toolMessages(afterSecond, "bash")).toHaveLength(1);
    expect((await w.state("t1")).egress_request).toMatchObject({ status: "approved" });
  });

  it("a reply other than an approval leaves the policy as it is", async () => {
    const w = await world((curl) => [{ toolCalls: [curl("blocked.example")] }, { text: "Understood." }]);
    await w.client.chat("download it", { threadId: "t1" });
    await w.client.chat("Deny", { threadId: "t1" });
    expect(w.sidecar.policy().allow).toEqual(["pypi.org"]);
    expect((await w.state("t1")).egress_request).toMatchObject({ status: "denied" });
  });

  it("a non-interactive run drains its denials and denies without asking", async () => {
    const w = await world((curl) => [{ toolCalls: [curl("blocked.example"), curl("other.example")] }, { text: "done without it" }]);
    const text = await w.client.chat("download it", {
      threadId: "t1",
      principal: INTERNAL_PRINCIPAL,
      context: { non_interactive: true },
    });
    expect(text).toBe("done without it");
    const messages = await w.messages("t1");
    expect(toolMessages(messages, "ask_clarification")).toEqual([]);
    expect(toolMessages(messages, "bash")).toHaveLength(2);
    // Both denials were taken (surfaced) by the run; nothing is left to ask about, and the policy is unchanged.
    expect(
      w.sidecar.denials
        .list()
        .map((d) => d.host)
        .sort(),
    ).toEqual(["blocked.example", "other.example"]);
    expect(w.sidecar.denials.claimOldest()).toBeUndefined();
    expect(w.sidecar.policy().allow).toEqual(["pypi.org"]);
  });
});
