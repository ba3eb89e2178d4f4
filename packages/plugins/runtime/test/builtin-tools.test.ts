import { promises as fsp } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AntlerTool, threadPaths } from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { createAgent, createMiddleware, fakeModel } from "langchain";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import { mergeArtifacts } from "../src/state.js";
import {
  createPresentFilesTool,
  createSetupAgentTool,
  createUpdateAgentTool,
  createViewImageTool,
  sniffImageType,
} from "../src/tools/index.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

const OUTPUTS_ONLY = "only files under /mnt/user-data/outputs can be presented; write the file there first";

const viewedImage = z.object({ mime_type: z.string(), size: z.number(), sha256: z.string() });
type ViewedImages = Record<string, z.infer<typeof viewedImage>>;

/** The thread-state channels the tools write, so their Command updates land somewhere. */
const threadState = createMiddleware({
  name: "TestThreadState",
  stateSchema: new StateSchema({
    artifacts: new ReducedValue(z.array(z.string()).optional(), {
      inputSchema: z.array(z.string()).optional(),
      reducer: (a: string[] | undefined, b: string[] | undefined) => mergeArtifacts(a, b),
    }),
    viewed_images: new ReducedValue(z.record(z.string(), viewedImage).optional(), {
      inputSchema: z.record(z.string(), viewedImage).optional(),
      reducer: (a: ViewedImages | undefined, b: ViewedImages | undefined) => ({ ...(a ?? {}), ...(b ?? {}) }),
    }),
  }),
});

interface RunResult {
  messages: BaseMessage[];
  artifacts?: string[];
  viewed_images?: ViewedImages;
}

/** One agent turn with a scripted model: each entry of `calls` is one model response of tool calls, then "done". */
async function runTools(
  tool: AntlerTool,
  calls: Array<Record<string, unknown>>,
  context: Record<string, unknown>,
): Promise<{ result: RunResult; toolMessages: ToolMessage[] }> {
  let model = fakeModel();
  calls.forEach((args, i) => {
    model = model.respondWithTools([{ name: tool.name, args, id: `call_${i}` }]);
  });
  model = model.respond(new AIMessage("done"));
  const agent = createAgent({ model, tools: [tool], middleware: [threadState] });
  const result = (await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { context })) as unknown as RunResult;
  const toolMessages = result.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
  return { result, toolMessages };
}

const contentOf = (m: ToolMessage | undefined) => (typeof m?.content === "string" ? m.content : JSON.stringify(m?.content));

let base: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "antler-builtin-tools-"));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(base, { recursive: true, force: true });
});

const ctx = { user_id: "u1", thread_id: "t1" };
async function threadFolders() {
  const paths = threadPaths(base, "u1", "t1");
  for (const dir of [paths.workspace, paths.uploads, paths.outputs]) await mkdir(dir, { recursive: true });
  return paths;
}

describe("present_files", () => {
  it("presents a real file in outputs and adds its virtual path to artifacts", async () => {
    const paths = await threadFolders();
    await writeFile(join(paths.outputs, "report.md"), "# report");
    const { result, toolMessages } = await runTools(
      createPresentFilesTool({ baseDir: base }),
      [{ filepaths: ["/mnt/user-data/outputs/report.md"] }],
      ctx,
    );
    expect(result.artifacts).toEqual(["/mnt/user-data/outputs/report.md"]);
    expect(toolMessages[0]?.status).toBe("success");
    expect(contentOf(toolMessages[0])).toContain("/mnt/user-data/outputs/report.md");
  });

  it("keeps artifacts an ordered de-duplicated union across calls, normalizing ./ segments", async () => {
    const paths = await threadFolders();
    await writeFile(join(paths.outputs, "a.md"), "a");
    await writeFile(join(paths.outputs, "b.md"), "b");
    const { result } = await runTools(
      createPresentFilesTool({ baseDir: base }),
      [{ filepaths: ["/mnt/user-data/outputs/a.md"] }, { filepaths: ["/mnt/user-data/outputs/b.md", "/mnt/user-data/outputs/./a.md"] }],
      ctx,
    );
    expect(result.artifacts).toEqual(["/mnt/user-data/outputs/a.md", "/mnt/user-data/outputs/b.md"]);
  });

  const refusals: Array<[string, string, (p: ReturnType<typeof threadPaths>) => Promise<void>]> = [
    ["a workspace file", "/mnt/user-data/workspace/x.md", async (p) => writeFile(join(p.workspace, "x.md"), "x")],
    ["a host file", "/etc/passwd", async () => undefined],
    ["a .. escape from outputs", "/mnt/user-data/outputs/../uploads/a", async (p) => writeFile(join(p.uploads, "a"), "a")],
    [
      "a symlink in outputs pointing outside",
      "/mnt/user-data/outputs/link.md",
      async (p) => symlink("/etc/hostname", join(p.outputs, "link.md")),
    ],
    ["a missing file", "/mnt/user-data/outputs/missing.md", async () => undefined],
    ["a relative path", "report.md", async (p) => writeFile(join(p.outputs, "report.md"), "r")],
    ["the outputs folder itself", "/mnt/user-data/outputs", async () => undefined],
  ];
  it.each(refusals)("refuses %s with an actionable error message naming the path", async (_what, bad, arrange) => {
    const paths = await threadFolders();
    await arrange(paths);
    const { result, toolMessages } = await runTools(createPresentFilesTool({ baseDir: base }), [{ filepaths: [bad] }], ctx);
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain(JSON.stringify(bad));
    expect(contentOf(toolMessages[0])).toContain(OUTPUTS_ONLY);
    expect(result.artifacts ?? []).toEqual([]);
  });

  it("presents nothing when one of several paths is refused", async () => {
    const paths = await threadFolders();
    await writeFile(join(paths.outputs, "ok.md"), "ok");
    const { result, toolMessages } = await runTools(
      createPresentFilesTool({ baseDir: base }),
      [{ filepaths: ["/mnt/user-data/outputs/ok.md", "/etc/passwd"] }],
      ctx,
    );
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).not.toContain('"/mnt/user-data/outputs/ok.md"');
    expect(result.artifacts ?? []).toEqual([]);
  });

  it("answers a run without thread_id with an error message instead of throwing", async () => {
    const { toolMessages } = await runTools(createPresentFilesTool({ baseDir: base }), [{ filepaths: ["/mnt/user-data/outputs/a.md"] }], {
      user_id: "u1",
    });
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain("thread_id");
  });

  it("uses the default user's folders when user_id is missing", async () => {
    const paths = threadPaths(base, "default", "t1");
    await mkdir(paths.outputs, { recursive: true });
    await writeFile(join(paths.outputs, "d.md"), "d");
    const { result } = await runTools(createPresentFilesTool({ baseDir: base }), [{ filepaths: ["/mnt/user-data/outputs/d.md"] }], {
      thread_id: "t1",
    });
    expect(result.artifacts).toEqual(["/mnt/user-data/outputs/d.md"]);
  });
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]);
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00", "latin1");
const WEBP = Buffer.concat([Buffer.from("RIFF"), Buffer.from([26, 0, 0, 0]), Buffer.from("WEBPVP8 ")]);

describe("view_image", () => {
  it("recognizes PNG, JPEG, GIF and WebP by their bytes, not their names", () => {
    expect([PNG, JPEG, GIF, WEBP].map((b) => sniffImageType(b))).toEqual(["image/png", "image/jpeg", "image/gif", "image/webp"]);
    expect(sniffImageType(Buffer.from("not an image"))).toBeUndefined();
  });

  it("records an uploaded image in viewed_images with its mime type (from bytes), size and sha256", async () => {
    const paths = await threadFolders();
    await writeFile(join(paths.uploads, "photo.png"), JPEG); // misnamed: the bytes decide
    const { result, toolMessages } = await runTools(
      createViewImageTool({ baseDir: base }),
      [{ image_path: "/mnt/user-data/uploads/photo.png" }],
      ctx,
    );
    expect(toolMessages[0]?.status).toBe("success");
    const { createHash } = await import("node:crypto");
    expect(result.viewed_images).toEqual({
      "/mnt/user-data/uploads/photo.png": {
        mime_type: "image/jpeg",
        size: JPEG.length,
        sha256: createHash("sha256").update(JPEG).digest("hex"),
      },
    });
  });

  const refusals: Array<[string, string, (p: ReturnType<typeof threadPaths>) => Promise<void>, string]> = [
    ["a text file named .png", "/mnt/user-data/workspace/fake.png", (p) => writeFile(join(p.workspace, "fake.png"), "hello"), "not a PNG"],
    [
      "a file over the size cap",
      "/mnt/user-data/outputs/big.png",
      (p) => writeFile(join(p.outputs, "big.png"), Buffer.concat([PNG, Buffer.alloc(2048)])),
      "limit",
    ],
    ["a path outside the thread folders", "/etc/hostname", async () => undefined, "outside"],
    ["a missing file", "/mnt/user-data/uploads/nope.png", async () => undefined, "does not exist"],
    ["an empty file", "/mnt/user-data/uploads/empty.png", (p) => writeFile(join(p.uploads, "empty.png"), ""), "empty"],
  ];
  it.each(refusals)("refuses %s with an error message and records nothing", async (_what, path, arrange, reason) => {
    const paths = await threadFolders();
    await arrange(paths);
    const { result, toolMessages } = await runTools(createViewImageTool({ baseDir: base, maxBytes: 1024 }), [{ image_path: path }], ctx);
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain(reason);
    expect(result.viewed_images ?? {}).toEqual({});
  });
});

const agentPath = (name: string, file = "") => join(base, "users", "u1", "agents", name, file);
const bootstrap = { ...ctx, is_bootstrap: true, agent_name: "research-helper" };

describe("setup_agent", () => {
  it("creates SOUL.md and config.yaml (name, description, skills, created_at) and leaves no temp files", async () => {
    const { toolMessages } = await runTools(
      createSetupAgentTool({ baseDir: base }),
      [{ soul: "You are a research helper.", description: "Finds papers.", skills: ["deep-research", " deep-research ", "pdf"] }],
      bootstrap,
    );
    expect(toolMessages[0]?.status).toBe("success");
    expect(await readFile(agentPath("research-helper", "SOUL.md"), "utf8")).toBe("You are a research helper.\n");
    const config = parse(await readFile(agentPath("research-helper", "config.yaml"), "utf8"));
    expect(config).toMatchObject({ name: "research-helper", description: "Finds papers.", skills: ["deep-research", "pdf"] });
    expect(Number.isNaN(Date.parse(config.created_at))).toBe(false);
    expect((await readdir(agentPath("research-helper"))).sort()).toEqual(["SOUL.md", "config.yaml"]);
  });

  it("takes the name from the agent_name argument when the run context has none", async () => {
    await runTools(createSetupAgentTool({ baseDir: base }), [{ soul: "s", description: "d", agent_name: "from-arg" }], {
      ...ctx,
      is_bootstrap: true,
    });
    expect(await readFile(agentPath("from-arg", "SOUL.md"), "utf8")).toBe("s\n");
  });

  it("refuses outside a bootstrap run and creates nothing", async () => {
    const { toolMessages } = await runTools(createSetupAgentTool({ baseDir: base }), [{ soul: "s", description: "d" }], {
      ...ctx,
      agent_name: "research-helper",
    });
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain("update_agent");
    await expect(readdir(join(base, "users", "u1", "agents"))).rejects.toThrow();
  });

  it("refuses an invalid agent name", async () => {
    const { toolMessages } = await runTools(
      createSetupAgentTool({ baseDir: base }),
      [{ soul: "s", description: "d", agent_name: "Bad Name" }],
      {
        ...ctx,
        is_bootstrap: true,
      },
    );
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain("lowercase");
  });

  it("refuses an agent that already exists and leaves it untouched", async () => {
    await mkdir(agentPath("research-helper"), { recursive: true });
    await writeFile(agentPath("research-helper", "SOUL.md"), "original");
    const { toolMessages } = await runTools(createSetupAgentTool({ baseDir: base }), [{ soul: "new", description: "d" }], bootstrap);
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain("already exists");
    expect(await readFile(agentPath("research-helper", "SOUL.md"), "utf8")).toBe("original");
  });

  it("rolls back when the second file cannot be renamed into place: no half-created agent remains", async () => {
    const realRename = fsp.rename.bind(fsp);
    let renames = 0;
    vi.spyOn(fsp, "rename").mockImplementation(async (from, to) => {
      if (++renames === 2) throw Object.assign(new Error("EIO: simulated rename failure"), { code: "EIO" });
      return realRename(from, to);
    });
    const { toolMessages } = await runTools(createSetupAgentTool({ baseDir: base }), [{ soul: "s", description: "d" }], bootstrap);
    expect(renames).toBe(2);
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain("nothing was created");
    expect(await readdir(join(base, "users", "u1", "agents"))).toEqual([]);
  });
});

describe("update_agent", () => {
  const custom = { ...ctx, agent_name: "helper" };
  const originalConfig = "# my agent\nname: helper\ndescription: old description\nskills:\n  - pdf\nextra_key: keep me\n";
  beforeEach(async () => {
    await mkdir(agentPath("helper"), { recursive: true });
    await writeFile(agentPath("helper", "SOUL.md"), "old soul\n");
    await writeFile(agentPath("helper", "config.yaml"), originalConfig);
  });

  it("changes only the config fields given, keeping other keys and comments, and leaves SOUL.md alone", async () => {
    const { toolMessages } = await runTools(
      createUpdateAgentTool({ baseDir: base }),
      [{ description: "new description", tool_groups: ["web"] }],
      custom,
    );
    expect(toolMessages[0]?.status).toBe("success");
    const text = await readFile(agentPath("helper", "config.yaml"), "utf8");
    expect(text).toContain("# my agent");
    expect(parse(text)).toMatchObject({
      name: "helper",
      description: "new description",
      skills: ["pdf"],
      tool_groups: ["web"],
      extra_key: "keep me",
    });
    expect(await readFile(agentPath("helper", "SOUL.md"), "utf8")).toBe("old soul\n");
    expect((await readdir(agentPath("helper"))).sort()).toEqual(["SOUL.md", "config.yaml"]);
  });

  it("replaces SOUL.md alone without touching config.yaml", async () => {
    await runTools(createUpdateAgentTool({ baseDir: base }), [{ soul: "new soul" }], custom);
    expect(await readFile(agentPath("helper", "SOUL.md"), "utf8")).toBe("new soul\n");
    expect(await readFile(agentPath("helper", "config.yaml"), "utf8")).toBe(originalConfig);
  });

  it("restores SOUL.md when config.yaml cannot be renamed into place", async () => {
    const realRename = fsp.rename.bind(fsp);
    let renames = 0;
    vi.spyOn(fsp, "rename").mockImplementation(async (from, to) => {
      if (++renames === 2) throw Object.assign(new Error("EIO: simulated rename failure"), { code: "EIO" });
      return realRename(from, to);
    });
    const { toolMessages } = await runTools(createUpdateAgentTool({ baseDir: base }), [{ soul: "new soul", model: "gpt-x" }], custom);
    expect(toolMessages[0]?.status).toBe("error");
    expect(await readFile(agentPath("helper", "SOUL.md"), "utf8")).toBe("old soul\n");
    expect(await readFile(agentPath("helper", "config.yaml"), "utf8")).toBe(originalConfig);
    expect((await readdir(agentPath("helper"))).sort()).toEqual(["SOUL.md", "config.yaml"]);
  });

  const refusals: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
    ["a call with nothing to update", {}, custom, "Nothing to update"],
    ["an agent whose folder is missing", { description: "x" }, { ...ctx, agent_name: "ghost" }, "does not exist"],
    ["a conversation without a custom agent", { description: "x" }, ctx, "custom agent"],
    ["a bootstrap run", { description: "x" }, { ...custom, is_bootstrap: true }, "setup_agent"],
  ];
  it.each(refusals)("refuses %s with an error message and changes nothing", async (_what, args, context, reason) => {
    const { toolMessages } = await runTools(createUpdateAgentTool({ baseDir: base }), [args], context);
    expect(toolMessages[0]?.status).toBe("error");
    expect(contentOf(toolMessages[0])).toContain(reason);
    expect(await readFile(agentPath("helper", "config.yaml"), "utf8")).toBe(originalConfig);
  });

  it("refuses to rewrite a config.yaml that is not valid YAML", async () => {
    await writeFile(agentPath("helper", "config.yaml"), "name: [unclosed\n");
    const { toolMessages } = await runTools(createUpdateAgentTool({ baseDir: base }), [{ description: "x" }], custom);
    expect(toolMessages[0]?.status).toBe("error");
    expect(await readFile(agentPath("helper", "config.yaml"), "utf8")).toBe("name: [unclosed\n");
  });
});
