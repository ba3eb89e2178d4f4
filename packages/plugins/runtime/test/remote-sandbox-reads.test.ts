import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AntlerTool, composeChain, type MiddlewareSpec, threadPaths } from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import { captureLogs } from "@antler/kernel/testing";
import { createFolderRemote, E2BSandboxProvider, e2bConfigSchema, SANDBOX_SYNC_LEDGER_FILE } from "@antler/sandbox-e2b";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, fakeModel } from "langchain";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { viewImageMiddleware } from "../src/middleware/view-image.js";
import { compileThreadPipeline } from "../src/state.js";
import { createPresentFilesTool, createViewImageTool } from "../src/tools/index.js";
import { tempDir } from "./fixtures.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

/**
 * `view_image`, the ViewImage middleware and `present_files` against a real E2B provider whose remote is a host
 * folder per VM (the package's folder remote): files the agent makes exist only "in the VM" until the output
 * sync at release copies them to the thread's host outputs and records their SHA-256 in the sync ledger.
 */

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const png = (tag: string) => Buffer.concat([PNG_SIGNATURE, Buffer.from(tag)]);
const dataUrl = (bytes: Buffer) => `data:image/png;base64,${bytes.toString("base64")}`;
const PATH = "/mnt/user-data/outputs/chart.png";

let providers: E2BSandboxProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.map((p) => p.close()));
  providers = [];
});

function setup(poolSize = 0) {
  const root = tempDir();
  const baseDir = join(root, "data");
  const remote = createFolderRemote({ root: join(root, "vms") });
  const provider = new E2BSandboxProvider({
    config: e2bConfigSchema.parse({ pool_size: poolSize }),
    baseDir,
    logger: captureLogs().logger,
    remote,
  });
  providers.push(provider);
  const lookup = (id: string) => provider.get(id);
  const host = threadPaths(baseDir, "u", "t1");
  return { baseDir, provider, lookup, host, remote };
}

type Model = ReturnType<typeof fakeModel>;
interface State {
  messages: BaseMessage[];
  artifacts?: string[];
  viewed_images?: Record<string, { generation?: string; sha256: string }>;
}

function agentWith(specs: readonly MiddlewareSpec[], model: Model, tools: readonly AntlerTool[]) {
  const chain = composeChain(
    specs.map((spec) => ({ name: spec.name, plugin: "@antler/kernel", placement: {}, spec })),
    [],
  );
  const compiled = compileThreadPipeline(chain);
  const agent = createAgent({
    model,
    tools: [...tools, ...compiled.tools],
    middleware: compiled.middleware,
    checkpointer: new MemorySaver(),
  });
  return (sandboxId: string): Promise<State> => {
    const invoke = agent.invoke.bind(agent) as unknown as (input: unknown, config: unknown) => Promise<State>;
    // The Sandbox middleware records `{ sandbox_id }` in state when a sandbox tool first runs; here it is given.
    return invoke(
      { messages: [new HumanMessage("go")], sandbox: { sandbox_id: sandboxId } },
      { configurable: { thread_id: "t1" }, context: { user_id: "u", thread_id: "t1" } },
    );
  };
}

const imageBlocks = (m: BaseMessage | undefined): string[] =>
  Array.isArray(m?.content)
    ? m.content.flatMap((b) => (b.type === "image_url" ? [String((b as unknown as { image_url: { url: string } }).image_url.url)] : []))
    : [];
const toolTexts = (state: State) =>
  state.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => `${m.status}: ${m.text}`);

function viewThenDone() {
  return fakeModel()
    .respondWithTools([{ name: "view_image", args: { image_path: PATH }, id: "v1" }])
    .respond(new AIMessage("seen"));
}

describe("files made in a remote sandbox are usable at once", () => {
  it("views and presents an image made in the live VM this turn, before any sync", async () => {
    const { baseDir, provider, lookup, host } = setup();
    const sandbox = await provider.acquire("t1", { userId: "u" });
    await sandbox.updateFile(PATH, png("live"));
    await expect(readFile(join(host.outputs, "chart.png"))).rejects.toThrow(/ENOENT/);

    const model = viewThenDone();
    const run = agentWith([viewImageMiddleware({ baseDir, sandbox: lookup })], model, [createViewImageTool({ baseDir, sandbox: lookup })]);
    const state = await run(sandbox.id);

    expect(toolTexts(state)[0]).toMatch(/^success: Loaded \/mnt\/user-data\/outputs\/chart\.png/);
    expect(imageBlocks(model.calls[1]?.messages.at(-1))).toEqual([dataUrl(png("live"))]);

    const presentModel = fakeModel()
      .respondWithTools([{ name: "present_files", args: { filepaths: [PATH] }, id: "p1" }])
      .respond(new AIMessage("here"));
    const presented = await agentWith([], presentModel, [createPresentFilesTool({ baseDir, sandbox: lookup })])(sandbox.id);
    expect(presented.artifacts).toEqual([PATH]);
  });

  it("shows the live bytes, not the older synced host copy, while the same sandbox generation lives", async () => {
    const { baseDir, provider, lookup, host } = setup();
    const sandbox = await provider.acquire("t1", { userId: "u" });
    await sandbox.updateFile(PATH, png("synced"));
    await provider.syncOutputs(sandbox.id);
    await sandbox.updateFile(PATH, png("changed after the sync"));
    expect(await readFile(join(host.outputs, "chart.png"))).toEqual(png("synced"));

    const model = viewThenDone();
    const run = agentWith([viewImageMiddleware({ baseDir, sandbox: lookup })], model, [createViewImageTool({ baseDir, sandbox: lookup })]);
    const state = await run(sandbox.id);

    expect(imageBlocks(model.calls[1]?.messages.at(-1))).toEqual([dataUrl(png("changed after the sync"))]);
    const viewed = state.messages.find((m) => ToolMessage.isInstance(m));
    expect(viewed?.text).toContain(`${png("changed after the sync").length} bytes`);
  });

  it("in a replacement sandbox, serves the synced host copy only while its SHA-256 matches the ledger", async () => {
    const { baseDir, provider, lookup, host } = setup();
    const first = await provider.acquire("t1", { userId: "u" });
    const firstGeneration = first.generation;
    await first.updateFile(PATH, png("made by the first VM"));
    await provider.release(first.id); // syncs the outputs, then kills the VM (pool_size 0)

    const ledger = JSON.parse(await readFile(join(host.threadDir, SANDBOX_SYNC_LEDGER_FILE), "utf8"));
    expect(ledger.files[PATH]).toEqual({
      sha256: createHash("sha256").update(png("made by the first VM")).digest("hex"),
      size: png("made by the first VM").length,
      generation: firstGeneration,
    });

    const second = await provider.acquire("t1", { userId: "u" });
    expect(second.id).toBe(first.id);
    expect(second.generation).not.toBe(firstGeneration);

    const model = viewThenDone();
    const tools = [createViewImageTool({ baseDir, sandbox: lookup }), createPresentFilesTool({ baseDir, sandbox: lookup })];
    await agentWith([viewImageMiddleware({ baseDir, sandbox: lookup })], model, tools)(second.id);
    expect(imageBlocks(model.calls[1]?.messages.at(-1))).toEqual([dataUrl(png("made by the first VM"))]);

    // The host copy is changed behind the sync's back: neither tool may use it.
    await writeFile(join(host.outputs, "chart.png"), png("tampered on the host"));
    const refusedModel = fakeModel()
      .respondWithTools([{ name: "view_image", args: { image_path: PATH }, id: "v2" }])
      .respondWithTools([{ name: "present_files", args: { filepaths: [PATH] }, id: "p2" }])
      .respond(new AIMessage("cannot"));
    const refused = await agentWith([viewImageMiddleware({ baseDir, sandbox: lookup })], refusedModel, tools)(second.id);

    const [view, present] = toolTexts(refused);
    expect(view).toMatch(/^error: Cannot view .*no longer matches what was synchronized from sandbox generation/);
    expect(view).toContain("SHA-256");
    expect(present).toMatch(/^error: Nothing was presented\..*no longer matches what was synchronized/s);
    expect(refused.artifacts ?? []).toEqual([]);
    expect(refusedModel.calls.flatMap((c) => c.messages.flatMap((m) => imageBlocks(m)))).toEqual([]);
  });

  it("re-reads a viewed image from the synced copy when its VM is replaced before the next model call, and refuses a changed one", async () => {
    for (const tamper of [false, true]) {
      const { baseDir, provider, lookup, host } = setup();
      const first = await provider.acquire("t1", { userId: "u" });
      await first.updateFile(PATH, png("viewed in the first VM"));
      // The VM dies right after view_image answered: release syncs and kills it, a new generation takes over.
      const replaceAfterView: MiddlewareSpec = {
        name: "ReplaceVm",
        async wrapToolCall(request, handler) {
          const result = await handler(request);
          await provider.release(first.id);
          if (tamper) await writeFile(join(host.outputs, "chart.png"), png("changed on the host"));
          await provider.acquire("t1", { userId: "u" });
          return result;
        },
      };
      const model = viewThenDone();
      const state = await agentWith([viewImageMiddleware({ baseDir, sandbox: lookup }), replaceAfterView], model, [
        createViewImageTool({ baseDir, sandbox: lookup }),
      ])(first.id);

      expect(state.messages.some((m) => ToolMessage.isInstance(m) && m.status === "success")).toBe(true);
      const shown = model.calls[1]?.messages.at(-1);
      if (tamper) {
        expect(imageBlocks(shown)).toEqual([]);
        expect(shown?.text).toMatch(/chart\.png: the host copy no longer matches .*SHA-256/);
      } else {
        expect(imageBlocks(shown)).toEqual([dataUrl(png("viewed in the first VM"))]);
      }
      await provider.close();
    }
  });

  it("refuses a file of a replaced VM that was never synchronized, instead of serving whatever the host has", async () => {
    const { baseDir, provider, lookup, host, remote } = setup();
    const first = await provider.acquire("t1", { userId: "u" });
    await first.updateFile(PATH, png("never synced"));
    const replaceWithoutSync: MiddlewareSpec = {
      name: "VmDies",
      async wrapToolCall(request, handler) {
        const result = await handler(request);
        // The VM dies before any sync could copy the file; a new VM takes over; a host file of that name appears.
        await remote.kill(first.remote.sandboxId);
        await provider.release(first.id);
        await provider.acquire("t1", { userId: "u" });
        await mkdir(host.outputs, { recursive: true });
        await writeFile(join(host.outputs, "chart.png"), png("never synced"));
        return result;
      },
    };
    const model = viewThenDone();
    await agentWith([viewImageMiddleware({ baseDir, sandbox: lookup }), replaceWithoutSync], model, [
      createViewImageTool({ baseDir, sandbox: lookup }),
    ])(first.id);

    const shown = model.calls[1]?.messages.at(-1);
    expect(imageBlocks(shown)).toEqual([]);
    expect(shown?.text).toMatch(/has been replaced, and no synchronized copy of it was recorded/);
  });
});
