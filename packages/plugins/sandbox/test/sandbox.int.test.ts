import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type AntlerPlugin, definePlugin, type Sandbox, type SandboxProvider } from "@antler/kernel";
import { type Script, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, checkpointThreadId, type SerializedMessage } from "@antler/plugin-runtime";
import localPlugin, { LocalSandboxProvider } from "@antler/sandbox-local";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import sandboxPlugin from "../src/index.js";

const WS = "/mnt/user-data/workspace";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "antler-sandbox-test-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A provider plugin that counts acquisitions and releases of a real local provider. */
function countingLocal() {
  const acquired: string[] = [];
  const released: string[] = [];
  const plugin = definePlugin({
    name: "test-counting-local",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      const inner = new LocalSandboxProvider({ baseDir: ctx.paths.baseDir });
      const provider: SandboxProvider = {
        id: "counting",
        isolated: false,
        acquire: (threadId, options) => {
          acquired.push(threadId);
          return inner.acquire(threadId, options);
        },
        get: (id) => inner.get(id),
        release: async (id) => {
          released.push(id);
          await inner.release(id);
        },
        reset: () => inner.reset(),
        close: () => inner.close(),
      };
      ctx.sandbox.addProvider(provider);
    },
  });
  return { plugin, acquired, released };
}

interface Setup {
  sandbox?: Record<string, unknown>;
  provider?: AntlerPlugin;
}

async function start(script: Script, setup: Setup = {}) {
  const cwd = tempDir();
  const scripted = scriptedModelsPlugin({ m: script });
  const saver = new MemorySaver();
  const client = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      logging: { level: "warn" },
      sandbox: setup.sandbox ?? { allow_host_bash: true },
    },
    plugins: [scripted, setup.provider ?? localPlugin, sandboxPlugin],
    cwd,
    env: {},
    discover: false,
    checkpointer: saver,
  });
  cleanups.push(() => client.close());
  const baseDir = client.kernel.paths.baseDir;
  return {
    client,
    model: () => scripted.models.get("m"),
    /** Host path of a thread's workspace file. */
    hostFile: (thread: string, rel: string, user = "default") =>
      join(baseDir, "users", user, "threads", thread, "user-data", "workspace", rel),
    /** The thread's checkpointed state, including private keys. */
    state: async (thread: string, user = "default") => {
      const tuple = await saver.getTuple({ configurable: { thread_id: checkpointThreadId(user, thread), checkpoint_ns: "" } });
      return (tuple?.checkpoint.channel_values ?? {}) as Record<string, unknown>;
    },
    /** Tool results of a thread by tool call id. */
    results: async (thread: string, user = "default") => {
      const details = await client.getThread(thread, { userId: user });
      return new Map(
        details.messages
          .filter((m): m is SerializedMessage & { tool_call_id: string } => m.type === "tool")
          .map((m) => [m.tool_call_id, m]),
      );
    },
  };
}

function seed(file: string, content: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

describe("@antler/plugin-sandbox through a real AntlerClient and the local provider", () => {
  it("writes a file, runs bash that reads it, and records the sandbox id in state", async () => {
    const t = await start([
      { toolCalls: [{ id: "w", name: "write_file", args: { description: "save", path: `${WS}/hello.txt`, content: "hello sandbox\n" } }] },
      { toolCalls: [{ id: "b", name: "bash", args: { description: "show", command: `cat ${WS}/hello.txt && pwd` } }] },
      { text: "done" },
    ]);
    expect(await t.client.chat("go", { threadId: "t1" })).toBe("done");
    const results = await t.results("t1");
    expect(results.get("w")).toMatchObject({
      status: "success",
      content: expect.stringContaining("Created /mnt/user-data/workspace/hello.txt"),
    });
    expect(results.get("b")?.status).toBe("success");
    expect(results.get("b")?.content).toContain("hello sandbox");
    expect(readFileSync(t.hostFile("t1", "hello.txt"), "utf8")).toBe("hello sandbox\n");
    const state = await t.state("t1");
    expect(state.sandbox).toEqual({ sandbox_id: "local:default/t1" });
    expect(state._read_stamps).toHaveProperty([`${WS}/hello.txt`]);
  });

  it("acquires the sandbox only when a tool needs it, once per turn, and releases it after the agent", async () => {
    const counting = countingLocal();
    const t = await start(
      [
        { text: "just talking" },
        {
          toolCalls: [
            { id: "l", name: "ls", args: { description: "look", path: WS } },
            { id: "g", name: "glob", args: { description: "find", pattern: "**/*" } },
          ],
        },
        { text: "looked" },
      ],
      { provider: counting.plugin, sandbox: { provider: "counting" } },
    );
    await t.client.chat("hi", { threadId: "lazy" });
    expect(counting.acquired).toEqual([]);
    expect((await t.state("lazy")).sandbox).toBeUndefined();

    await t.client.chat("look around", { threadId: "lazy" });
    expect(counting.acquired).toEqual(["lazy"]);
    expect(counting.released).toEqual(["local:default/lazy"]);
    expect((await t.state("lazy")).sandbox).toEqual({ sandbox_id: "local:default/lazy" });
    const results = await t.results("lazy");
    expect(results.get("l")?.status).toBe("success");
    expect(results.get("g")?.content).toBe('No files match "**/*" under /mnt/user-data/workspace.');
  });

  it("moves the thread to a new sandbox id when the provider hands out a different one", async () => {
    let generation = 0;
    const regenerating = definePlugin({
      name: "test-regenerating",
      version: "0.1.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.sandbox.addProvider({
          id: "regen",
          isolated: true,
          acquire: async (threadId) => {
            generation += 1;
            return { id: `regen-${generation}:${threadId}`, listDir: async () => [] } as unknown as Sandbox;
          },
          get: () => undefined,
          release: async () => {},
          reset: async () => {},
          close: async () => {},
        });
      },
    });
    const ls = { toolCalls: [{ name: "ls", args: { description: "x", path: WS } }] };
    const t = await start([ls, { text: "one" }, ls, { text: "two" }], { provider: regenerating, sandbox: {} });
    expect(await t.client.chat("1", { threadId: "regen" })).toBe("one");
    expect((await t.state("regen")).sandbox).toEqual({ sandbox_id: "regen-1:regen" });
    expect(await t.client.chat("2", { threadId: "regen" })).toBe("two");
    expect((await t.state("regen")).sandbox).toEqual({ sandbox_id: "regen-2:regen" });
  });

  it("refuses to overwrite an unread file, allows it after read_file, and refuses again once the file changed", async () => {
    const t = await start(
      [
        { toolCalls: [{ id: "w1", name: "write_file", args: { description: "x", path: `${WS}/notes.md`, content: "mine" } }] },
        { toolCalls: [{ id: "r1", name: "read_file", args: { description: "x", path: `${WS}/notes.md` } }] },
        { toolCalls: [{ id: "w2", name: "write_file", args: { description: "x", path: `${WS}/notes.md`, content: "mine" } }] },
        { text: "ok" },
        // Second turn: the stamp from turn one is still valid (state survives turns) until the file changes.
        {
          toolCalls: [
            { id: "s1", name: "str_replace", args: { description: "x", path: `${WS}/notes.md`, old_str: "mine", new_str: "ours" } },
          ],
        },
        { text: "ok" },
        {
          toolCalls: [
            { id: "s2", name: "str_replace", args: { description: "x", path: `${WS}/notes.md`, old_str: "ours", new_str: "theirs" } },
          ],
        },
        { text: "ok" },
      ],
      { sandbox: {} },
    );
    const file = t.hostFile("gate", "notes.md");
    seed(file, "original\n");
    await t.client.chat("edit", { threadId: "gate" });
    let results = await t.results("gate");
    expect(results.get("w1")?.status).toBe("error");
    expect(results.get("w1")?.content).toMatch(
      /^Error: write_file refused: \/mnt\/user-data\/workspace\/notes\.md already exists and this thread has not read it/,
    );
    expect(results.get("r1")?.content).toBe("original");
    expect(results.get("w2")).toMatchObject({ status: "success", content: expect.stringContaining("Replaced the content") });
    expect(readFileSync(file, "utf8")).toBe("mine");

    await t.client.chat("edit again", { threadId: "gate" });
    results = await t.results("gate");
    expect(results.get("s1")?.status).toBe("success");
    expect(readFileSync(file, "utf8")).toBe("ours");

    writeFileSync(file, "ours, changed behind the agent's back");
    await t.client.chat("edit once more", { threadId: "gate" });
    results = await t.results("gate");
    expect(results.get("s2")?.status).toBe("error");
    expect(results.get("s2")?.content).toContain("/mnt/user-data/workspace/notes.md changed since this thread last read it");
    expect(readFileSync(file, "utf8")).toBe("ours, changed behind the agent's back");
  });

  it("writes a new file without a read, and appends to an unread file", async () => {
    const t = await start(
      [
        { toolCalls: [{ id: "n", name: "write_file", args: { description: "x", path: "drafts/new.txt", content: "fresh" } }] },
        { toolCalls: [{ id: "a", name: "write_file", args: { description: "x", path: `${WS}/log.txt`, content: "two\n", append: true } }] },
        { text: "ok" },
      ],
      { sandbox: {} },
    );
    seed(t.hostFile("new", "log.txt"), "one\n");
    await t.client.chat("write", { threadId: "new" });
    const results = await t.results("new");
    expect(results.get("n")?.content).toContain(`Created ${WS}/drafts/new.txt`);
    expect(readFileSync(t.hostFile("new", "drafts/new.txt"), "utf8")).toBe("fresh");
    expect(results.get("a")?.status).toBe("success");
    expect(readFileSync(t.hostFile("new", "log.txt"), "utf8")).toBe("one\ntwo\n");
  });

  it("str_replace needs exactly one match unless replace_all, with distinct messages for 0 and several", async () => {
    const path = `${WS}/code.py`;
    const t = await start(
      [
        { toolCalls: [{ id: "r", name: "read_file", args: { description: "x", path } }] },
        { toolCalls: [{ id: "many", name: "str_replace", args: { description: "x", path, old_str: "foo", new_str: "bar" } }] },
        { toolCalls: [{ id: "none", name: "str_replace", args: { description: "x", path, old_str: "qux", new_str: "bar" } }] },
        {
          toolCalls: [
            { id: "all", name: "str_replace", args: { description: "x", path, old_str: "foo", new_str: "bar", replace_all: true } },
          ],
        },
        { toolCalls: [{ id: "one", name: "str_replace", args: { description: "x", path, old_str: "bar()\n", new_str: "$& baz()\n" } }] },
        { text: "ok" },
      ],
      { sandbox: {} },
    );
    seed(t.hostFile("sr", "code.py"), "foo = 1\nfoo()\nfoo.x\n");
    await t.client.chat("edit", { threadId: "sr" });
    const results = await t.results("sr");
    expect(results.get("many")?.status).toBe("error");
    expect(results.get("many")?.content).toContain("old_str matches 3 times in /mnt/user-data/workspace/code.py");
    expect(results.get("many")?.content).toContain("replace_all");
    expect(results.get("none")?.status).toBe("error");
    expect(results.get("none")?.content).toContain("old_str was not found in /mnt/user-data/workspace/code.py (0 matches)");
    expect(results.get("all")?.content).toBe(`Replaced 3 occurrences in ${path}.`);
    expect(results.get("one")?.content).toBe(`Replaced 1 occurrence in ${path}.`);
    // `$&` stayed literal.
    expect(readFileSync(t.hostFile("sr", "code.py"), "utf8")).toBe("bar = 1\n$& baz()\nbar.x\n");
  });

  it("serializes concurrent str_replace calls on one path, so no edit is lost", async () => {
    const path = `${WS}/config.ini`;
    const keys = ["a", "b", "c", "d", "e", "f"];
    const t = await start(
      [
        { toolCalls: [{ id: "r", name: "read_file", args: { description: "x", path } }] },
        {
          toolCalls: keys.map((k) => ({
            id: `e-${k}`,
            name: "str_replace",
            args: { description: "x", path, old_str: `${k}=old`, new_str: `${k}=new` },
          })),
        },
        { text: "ok" },
      ],
      { sandbox: {} },
    );
    seed(t.hostFile("par", "config.ini"), keys.map((k) => `${k}=old\n`).join(""));
    await t.client.chat("edit all", { threadId: "par" });
    const results = await t.results("par");
    for (const k of keys) expect(results.get(`e-${k}`)?.status).toBe("success");
    expect(readFileSync(t.hostFile("par", "config.ini"), "utf8")).toBe(keys.map((k) => `${k}=new\n`).join(""));
  });

  it("truncates bash output in the middle, keeping head and tail and saying how much was cut", async () => {
    const t = await start(
      [{ toolCalls: [{ id: "b", name: "bash", args: { description: "count", command: "seq 1 5000" } }] }, { text: "ok" }],
      { sandbox: { allow_host_bash: true, bash_output_max_chars: 1000 } },
    );
    await t.client.chat("count", { threadId: "trunc" });
    const out = (await t.results("trunc")).get("b")?.content ?? "";
    expect(out.length).toBeLessThanOrEqual(1000);
    expect(out.startsWith("1\n2\n3\n")).toBe(true);
    expect(out.endsWith("4999\n5000")).toBe(true);
    const cut = Number(/\[\.\.\. (\d+) characters cut from the middle of the output \.\.\.\]/.exec(out)?.[1]);
    const full = Array.from({ length: 5000 }, (_, i) => String(i + 1)).join("\n");
    const markerLength = out.length - (full.length - cut);
    expect(cut).toBeGreaterThan(0);
    expect(markerLength).toBeGreaterThan(0);
    expect(markerLength).toBeLessThan(100);
  });

  it("caps timeout_seconds at bash_command_timeout_seconds and kills the command", async () => {
    const t = await start(
      [
        { toolCalls: [{ id: "b", name: "bash", args: { description: "wait", command: "sleep 30; echo finished", timeout_seconds: 600 } }] },
        { text: "ok" },
      ],
      { sandbox: { allow_host_bash: true, bash_command_timeout_seconds: 1 } },
    );
    const started = Date.now();
    await t.client.chat("wait", { threadId: "slow" });
    expect(Date.now() - started).toBeLessThan(15_000);
    const out = (await t.results("slow")).get("b")?.content ?? "";
    expect(out).toContain("timed out after 1s");
    expect(out).not.toContain("finished");
  });

  it("does not offer bash on the non-isolated local provider without allow_host_bash, and refuses a call anyway", async () => {
    const t = await start([{ toolCalls: [{ id: "b", name: "bash", args: { description: "try", command: "echo hi" } }] }, { text: "ok" }], {
      sandbox: {},
    });
    await t.client.chat("try bash", { threadId: "nobash" });
    const tools = t.model()?.calls[0]?.tools ?? [];
    expect(tools).toEqual(expect.arrayContaining(["ls", "read_file", "glob", "grep", "write_file", "str_replace"]));
    expect(tools).not.toContain("bash");
    const result = (await t.results("nobash")).get("b");
    expect(result?.status).toBe("error");
    expect(result?.content).toContain("sandbox.allow_host_bash");
  });

  it("offers bash when allow_host_bash is set", async () => {
    const t = await start([{ text: "ok" }], { sandbox: { allow_host_bash: true } });
    await t.client.chat("hi", { threadId: "bash-on" });
    expect(t.model()?.calls[0]?.tools).toContain("bash");
  });

  it("refuses writes and edits under the read-only /mnt/skills and /mnt/acp-workspace", async () => {
    const t = await start(
      [
        {
          toolCalls: [
            { id: "w", name: "write_file", args: { description: "x", path: "/mnt/skills/public/evil/SKILL.md", content: "x" } },
            { id: "s", name: "str_replace", args: { description: "x", path: "/mnt/acp-workspace/a.txt", old_str: "a", new_str: "b" } },
            { id: "esc", name: "write_file", args: { description: "x", path: `${WS}/../../skills/x.md`, content: "x" } },
          ],
        },
        { text: "ok" },
      ],
      { sandbox: {} },
    );
    await t.client.chat("sneak", { threadId: "ro" });
    const results = await t.results("ro");
    expect(results.get("w")?.status).toBe("error");
    expect(results.get("w")?.content).toContain("/mnt/skills/public/evil/SKILL.md is under /mnt/skills, which is read-only");
    expect(results.get("s")?.content).toContain("is under /mnt/acp-workspace, which is read-only");
    expect(results.get("esc")?.content).toContain("/mnt/skills/x.md is under /mnt/skills, which is read-only");
    expect(existsSync(join(t.client.kernel.paths.baseDir, "skills", "public", "evil"))).toBe(false);
  });

  it("keeps two concurrent threads' sandboxes apart", async () => {
    const script: Script = (messages, callIndex) => {
      const human = messages.filter((m) => m.getType() === "human").at(-1);
      const word = String(human?.content);
      const last = messages.at(-1);
      if (last?.getType() === "human") {
        return {
          toolCalls: [
            { id: `w-${word}-${callIndex}`, name: "write_file", args: { description: "x", path: `${WS}/who.txt`, content: word } },
          ],
        };
      }
      if (last?.getType() === "tool" && String(last.content).startsWith("Created")) {
        return { toolCalls: [{ id: `r-${word}-${callIndex}`, name: "read_file", args: { description: "x", path: `${WS}/who.txt` } }] };
      }
      return { text: String(last?.content) };
    };
    const t = await start(script, { sandbox: {} });
    const [alpha, beta] = await Promise.all([t.client.chat("alpha", { threadId: "ta" }), t.client.chat("beta", { threadId: "tb" })]);
    expect(alpha).toBe("alpha");
    expect(beta).toBe("beta");
    expect((await t.state("ta")).sandbox).toEqual({ sandbox_id: "local:default/ta" });
    expect((await t.state("tb")).sandbox).toEqual({ sandbox_id: "local:default/tb" });
    expect(readFileSync(t.hostFile("ta", "who.txt"), "utf8")).toBe("alpha");
    expect(readFileSync(t.hostFile("tb", "who.txt"), "utf8")).toBe("beta");
  });

  it("reads line ranges, lists, globs and greps", async () => {
    const t = await start(
      [
        {
          toolCalls: [
            { id: "r", name: "read_file", args: { description: "x", path: `${WS}/src/a.ts`, start_line: 2, end_line: 3 } },
            { id: "missing", name: "read_file", args: { description: "x", path: `${WS}/nope.txt` } },
            { id: "l", name: "ls", args: { description: "x", path: WS } },
            { id: "g", name: "glob", args: { description: "x", pattern: "**/*.ts" } },
            { id: "q", name: "grep", args: { description: "x", pattern: "HELLO", ignore_case: true, glob: "*.ts" } },
          ],
        },
        { text: "ok" },
      ],
      { sandbox: {} },
    );
    seed(t.hostFile("fs", "src/a.ts"), "one\ntwo\nthree\nfour\n");
    seed(t.hostFile("fs", "src/b.ts"), "export const hello = 1;\n");
    await t.client.chat("explore", { threadId: "fs" });
    const results = await t.results("fs");
    expect(results.get("r")?.content).toBe("two\nthree");
    expect(results.get("missing")).toMatchObject({ status: "error", content: expect.stringContaining(`${WS}/nope.txt does not exist`) });
    expect(results.get("l")?.content).toContain("src/");
    expect(results.get("l")?.content).toContain("a.ts (19 bytes)");
    expect(results.get("g")?.content?.split("\n").sort()).toEqual([`${WS}/src/a.ts`, `${WS}/src/b.ts`]);
    expect(results.get("q")?.content).toBe(`${WS}/src/b.ts:1: export const hello = 1;`);
  });
});
