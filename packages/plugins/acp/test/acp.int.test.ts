import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { threadPaths } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import mcpPlugin from "@antler/plugin-mcp";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import sandboxPlugin from "@antler/plugin-sandbox";
import localSandboxPlugin from "@antler/sandbox-local";
import { afterEach, describe, expect, it } from "vitest";
import acpPlugin from "../src/index.js";

const AGENT_SCRIPT = fileURLToPath(new URL("../test-agent/agent.mjs", import.meta.url));
const USER = "u1";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Setup {
  agents?: Record<string, Record<string, unknown>>;
  mcp_servers?: Record<string, unknown>[];
  share_mcp_servers?: boolean;
  /** Config of `@antler/plugin-mcp`, loaded alongside when given. */
  mcp?: Record<string, unknown>;
  agent?: string;
  prompt?: string;
}

/** A real client whose scripted model calls invoke_acp_agent once, then answers "done". */
async function runOnce(threadId: string, setup: Setup = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "antler-acp-"));
  const agents = setup.agents ?? { tester: { command: process.execPath, args: [AGENT_SCRIPT], description: "Test agent." } };
  const scripted = scriptedModelsPlugin({
    m: [
      {
        id: "ai-1",
        toolCalls: [
          {
            name: "invoke_acp_agent",
            args: { agent: setup.agent ?? "tester", prompt: setup.prompt ?? "Summarize the plan" },
            id: "call-acp",
          },
        ],
      },
      { id: "ai-2", text: "done" },
    ],
  });
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
        plugin: acpPlugin,
        config: {
          acp_agents: agents,
          ...(setup.mcp_servers ? { mcp_servers: setup.mcp_servers } : {}),
          ...(setup.share_mcp_servers !== undefined ? { share_mcp_servers: setup.share_mcp_servers } : {}),
        },
      },
      ...(setup.mcp ? [{ plugin: mcpPlugin, config: setup.mcp }] : []),
    ],
    cwd,
    env: {},
    discover: false,
    userId: USER,
  });
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  cleanups.push(() => client.close());
  const events: StreamEvent[] = [];
  for await (const e of client.stream("go", { threadId })) events.push(e);
  const tool = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "tool" ? [e.data] : []));
  expect(tool).toHaveLength(1);
  const end = events.at(-1);
  const traceId = end?.type === "end" ? end.data.trace_id : undefined;
  const workspace = join(threadPaths(join(cwd, ".antler"), USER, threadId).threadDir, "acp-workspace");
  return { tool: tool[0] as { content: string; status?: string }, workspace, traceId };
}

function assertProcessGone(workspace: string): void {
  const pid = Number(readFileSync(join(workspace, "agent.pid"), "utf8"));
  expect(pid).toBeGreaterThan(0);
  let alive = true;
  try {
    process.kill(pid, 0);
  } catch {
    alive = false;
  }
  if (alive) process.kill(pid, "SIGKILL");
  expect(alive).toBe(false);
}

describe("invoke_acp_agent through a real AntlerClient and a real ACP agent process", () => {
  it("returns only agent_message_chunk text (no thought), names the agent and /mnt/acp-workspace, and ends the process", async () => {
    const { tool, workspace } = await runOnce("t-chunks");
    expect(tool.status).not.toBe("error");
    expect(tool.content).toContain('ACP agent "tester" answered');
    expect(tool.content).toContain("Working on it. Wrote notes.md. ");
    expect(tool.content).not.toContain("SECRET-THOUGHT");
    expect(tool.content).toContain("/mnt/acp-workspace/");
    assertProcessGone(workspace);
  });

  it("the agent runs in <threadDir>/acp-workspace and its file lands there, with the trace id in _meta", async () => {
    const { workspace, traceId } = await runOnce("t-files", { prompt: "Write the release notes" });
    const notes = readFileSync(join(workspace, "notes.md"), "utf8");
    expect(notes).toContain("Write the release notes");
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(notes).toContain(`trace: ${traceId}`);
  });

  it("passes the configured model hint and mcp_servers into session/new", async () => {
    const { workspace } = await runOnce("t-session", {
      agents: { tester: { command: process.execPath, args: [AGENT_SCRIPT], description: "Test agent.", model: "gpt-x" } },
      mcp_servers: [{ name: "files", command: "mcp-files" }],
    });
    const notes = readFileSync(join(workspace, "notes.md"), "utf8");
    expect(notes).toContain("model: gpt-x");
    expect(notes).toContain("mcp: files");
  });

  it("hands the session Antler's enabled MCP servers: stdio, and http where the agent can use it; never sse it cannot, OAuth or disabled ones", async () => {
    const down = "http://127.0.0.1:9/mcp";
    const mcp = {
      servers: {
        tools: {
          transport: "stdio",
          command: "antler-no-such-mcp-server",
          args: ["--flag"],
          env: { MODE: "test" },
          init_timeout_seconds: 2,
        },
        remote: { transport: "http", url: down, headers: { "X-Team": "research" }, init_timeout_seconds: 2 },
        legacy: { transport: "sse", url: down, init_timeout_seconds: 2 },
        off: { transport: "stdio", command: "antler-off", enabled: false },
        protected: {
          transport: "http",
          url: down,
          init_timeout_seconds: 2,
          oauth: { grant: "client_credentials", token_url: "http://127.0.0.1:9/token", client_id: "c", client_secret: "s" },
        },
      },
    };
    const shared = await runOnce("t-mcp-shared", { mcp, mcp_servers: [{ name: "files", command: "mcp-files" }] });
    expect(JSON.parse(readFileSync(join(shared.workspace, "mcp-servers.json"), "utf8"))).toEqual([
      { name: "tools", command: "antler-no-such-mcp-server", args: ["--flag"], env: [{ name: "MODE", value: "test" }] },
      { type: "http", name: "remote", url: down, headers: [{ name: "X-Team", value: "research" }] },
      { name: "files", command: "mcp-files", args: [], env: [] },
    ]);
    const own = await runOnce("t-mcp-own", { mcp, mcp_servers: [{ name: "files", command: "mcp-files" }], share_mcp_servers: false });
    expect(JSON.parse(readFileSync(join(own.workspace, "mcp-servers.json"), "utf8")).map((s: { name: string }) => s.name)).toEqual([
      "files",
    ]);
  });

  it("denies permission requests by default: approved.md is not written", async () => {
    const { tool, workspace } = await runOnce("t-deny");
    expect(tool.content).toContain("Permission denied, skipped approved.md.");
    expect(tool.content).toContain("Permission was denied for: Write approved.md");
    expect(existsSync(join(workspace, "notes.md"))).toBe(true);
    expect(existsSync(join(workspace, "approved.md"))).toBe(false);
  });

  it("grants permission requests with auto_approve_permissions: true: approved.md is written", async () => {
    const { tool, workspace } = await runOnce("t-allow", {
      agents: { tester: { command: process.execPath, args: [AGENT_SCRIPT], description: "Test agent.", auto_approve_permissions: true } },
    });
    expect(tool.content).toContain("Permission granted, wrote approved.md.");
    expect(existsSync(join(workspace, "approved.md"))).toBe(true);
  });

  it("a missing executable gives an actionable message naming the command and an adapter, not a raw ENOENT", async () => {
    const { tool } = await runOnce("t-missing", {
      agents: { codex: { command: "antler-no-such-acp-binary", description: "Codex." } },
      agent: "codex",
    });
    expect(tool.status).toBe("error");
    expect(tool.content).toContain('"antler-no-such-acp-binary"');
    expect(tool.content).toContain("@zed-industries/codex-acp");
    expect(tool.content).not.toContain("ENOENT");
  });

  it("an unknown agent name lists the configured agents", async () => {
    const { tool } = await runOnce("t-unknown", {
      agents: {
        tester: { command: process.execPath, args: [AGENT_SCRIPT], description: "Test agent." },
        other: { command: process.execPath, args: [AGENT_SCRIPT], description: "Another." },
      },
      agent: "nope",
    });
    expect(tool.status).toBe("error");
    expect(tool.content).toContain('unknown ACP agent "nope"');
    expect(tool.content).toContain("tester, other");
  });

  it("an unset $VAR in env is an error naming the variable", async () => {
    const { tool } = await runOnce("t-env", {
      agents: {
        tester: { command: process.execPath, args: [AGENT_SCRIPT], description: "Test agent.", env: { KEY: "$ANTLER_ACP_UNSET_VAR_X" } },
      },
    });
    expect(tool.status).toBe("error");
    expect(tool.content).toContain("ANTLER_ACP_UNSET_VAR_X");
  });

  it("on timeout the session is cancelled and the process ended, even when the agent ignores the cancel", async () => {
    const started = Date.now();
    const { tool, workspace } = await runOnce("t-timeout", {
      agents: {
        tester: {
          command: process.execPath,
          args: [AGENT_SCRIPT],
          description: "Stalls.",
          // The stalling agent never finishes; 2 s leaves a loaded machine time to start it and hear its first chunk.
          timeout_seconds: 2,
          env: { ACP_TEST_AGENT_MODE: "stall" },
        },
      },
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(tool.status).toBe("error");
    expect(tool.content).toContain("did not finish within 2s");
    expect(tool.content).toContain("Working on it.");
    expect(tool.content).not.toContain("SECRET-THOUGHT");
    expect(existsSync(join(workspace, "cancel.txt"))).toBe(true);
    assertProcessGone(workspace);
  });
});

describe("the lead agent sees the ACP workspace through the sandbox", () => {
  it("reads the agent's notes.md at /mnt/acp-workspace/ and is refused a write there as read-only", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "antler-acp-"));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const threadId = "t-mount";
    const scripted = scriptedModelsPlugin({
      m: [
        {
          id: "ai-1",
          toolCalls: [{ name: "invoke_acp_agent", args: { agent: "tester", prompt: "Draft the mount notes" }, id: "call-acp" }],
        },
        {
          id: "ai-2",
          toolCalls: [
            {
              name: "read_file",
              args: { description: "Read the agent's notes", path: "/mnt/acp-workspace/notes.md" },
              id: "call-read",
            },
          ],
        },
        {
          id: "ai-3",
          toolCalls: [
            {
              name: "write_file",
              args: { description: "Try to write into the agent's folder", path: "/mnt/acp-workspace/x.md", content: "nope" },
              id: "call-write",
            },
          ],
        },
        { id: "ai-4", text: "done" },
      ],
    });
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
        sandbox: { provider: "local" },
      },
      plugins: [
        scripted,
        {
          plugin: acpPlugin,
          config: { acp_agents: { tester: { command: process.execPath, args: [AGENT_SCRIPT], description: "Test agent." } } },
        },
        localSandboxPlugin,
        sandboxPlugin,
      ],
      cwd,
      env: {},
      discover: false,
      userId: USER,
    });
    cleanups.push(() => client.close());

    const events: StreamEvent[] = [];
    for await (const e of client.stream("go", { threadId })) events.push(e);
    const tools = new Map(
      events.flatMap((e) =>
        e.type === "messages-tuple" && e.data.type === "tool"
          ? [[String(e.data.tool_call_id), e.data as { content: string; status?: string }] as const]
          : [],
      ),
    );

    const workspace = join(threadPaths(join(cwd, ".antler"), USER, threadId).threadDir, "acp-workspace");
    const written = readFileSync(join(workspace, "notes.md"), "utf8");
    expect(written).toContain("Draft the mount notes");

    const read = tools.get("call-read");
    expect(read?.status).not.toBe("error");
    expect(read?.content).toContain("Draft the mount notes");
    expect(read?.content).toContain("# Notes");

    const write = tools.get("call-write");
    expect(write?.status).toBe("error");
    expect(write?.content).toContain("is under /mnt/acp-workspace, which is read-only");
    expect(existsSync(join(workspace, "x.md"))).toBe(false);
  });
});
