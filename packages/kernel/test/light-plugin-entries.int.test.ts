// Each plugin package's `./plugin` export is the light entry `antler config check` and `antler plugins list` load:
// importing it and running its `setup` through a real kernel (default preset included) must load no heavy
// dependency (LangChain, databases, HTTP servers, MCP, browsers, exporters). Those load on first use: in a tool
// factory, a middleware's `create`, a provider's `create`, a command's `run` or a `start` tap. Every module the
// child process loads is recorded by a module-loading hook; the package a module belongs to is the folder after
// the last `node_modules/` in its URL. Needs `pnpm run build` (the child runs dist/).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = join(import.meta.dirname, "../../..");
const KERNEL_DIR = join(REPO_ROOT, "packages/kernel");
/** The file plugins get for `@antler/kernel` (the bundle), so the child boots the same kernel instance they import. */
const kernelExports = (
  JSON.parse(readFileSync(join(KERNEL_DIR, "package.json"), "utf8")) as { exports: Record<string, { default?: string }> }
).exports;
const KERNEL_DIST = join(KERNEL_DIR, kernelExports["."]?.default ?? "dist/index.js");

/** Packages (or scopes, ending in "/") that no light entry may load, and no setup. */
const HEAVY = [
  "langchain",
  "@langchain/",
  "langsmith",
  "kysely",
  "hono",
  "@hono/",
  "@modelcontextprotocol/",
  "better-sqlite3",
  "pg",
  "ioredis",
  "playwright",
  "playwright-core",
  "@opentelemetry/sdk-",
  "@opentelemetry/exporter-",
  "prom-client",
  "undici",
  "linkedom",
  "pdfjs-dist",
  "axios",
  "@tavily/",
  "@mendable/",
  "openai",
  "@anthropic-ai/",
  "@agentclientprotocol/",
  "execa",
  "e2b",
  // The kernel carries its own copy in its bundle; a second one costs tens of milliseconds at start-up.
  "yaml",
];

interface LightEntry {
  /** The package folder, from the repository root. */
  readonly dir: string;
  /** `plugins[i].config` for its setup. */
  readonly config?: Record<string, unknown>;
  /** Kernel config sections the plugin reads. */
  readonly kernelConfig?: Record<string, unknown>;
  /** Package folders of the plugins it depends on, booted (from their own light entries) before it. */
  readonly alongside?: readonly string[];
}

const ENTRIES: readonly LightEntry[] = [
  { dir: "packages/plugins/runtime" },
  { dir: "packages/plugins/cassette" },
  { dir: "packages/plugins/storage-sqlite" },
  { dir: "packages/plugins/storage-postgres" },
  { dir: "packages/plugins/sandbox", kernelConfig: { sandbox: { provider: "local", allow_host_bash: true } } },
  {
    dir: "packages/plugins/mcp",
    config: {
      servers: {
        stdio: { transport: "stdio", command: "node", args: ["server.js"] },
        tasks: {
          transport: "http",
          url: "http://127.0.0.1:9/mcp",
          tasks: { tools: [{ tool: "render", status_tool: "render_status" }] },
        },
      },
    },
  },
  { dir: "packages/community-tools/web", config: { fetch: "direct", allow_private_addresses: true } },
  { dir: "packages/plugins/gateway", config: { auth: { mode: "none" } } },
  { dir: "packages/plugins/console" },
  { dir: "packages/plugins/skills", kernelConfig: { skills: { deferred_discovery: true } } },
  { dir: "packages/sandbox-providers/local", kernelConfig: { sandbox: { provider: "local" } } },
  { dir: "packages/plugins/memory", kernelConfig: { memory: { mode: "tool" } } },
  { dir: "packages/plugins/subagents" },
  { dir: "packages/plugins/acp", config: { acp_agents: { coder: { command: "codex-acp", description: "A coding agent." } } } },
  { dir: "packages/community-tools/browser", config: { live: { enabled: true } } },
  { dir: "packages/plugins/otel" },
  { dir: "packages/plugins/metrics" },
  {
    dir: "packages/plugins/guardrails",
    kernelConfig: {
      guardrails: { enabled: true, providers: [{ use: "allowlist", config: { denied_tools: ["wipe_disk"] } }] },
      authorization: { enabled: true, default_role: "user", roles: { user: { tool_groups: ["web"], models: ["*"] } } },
    },
  },
  { dir: "packages/plugins/tool-search", kernelConfig: { tool_search: { enabled: true, deferred: ["acme_*"] } } },
  { dir: "packages/plugins/workspace-changes" },
  { dir: "packages/plugins/scheduler" },
  { dir: "packages/plugins/batch", alongside: ["packages/plugins/subagents"] },
  { dir: "packages/plugins/openai", kernelConfig: { models: [{ name: "gpt", provider: "openai", model: "gpt-4o-mini" }] } },
  { dir: "packages/plugins/anthropic", kernelConfig: { models: [{ name: "claude", provider: "anthropic", model: "claude-sonnet-4-5" }] } },
  { dir: "packages/sandbox-providers/aio", kernelConfig: { sandbox: { provider: "aio" } } },
  { dir: "packages/sandbox-providers/e2b", kernelConfig: { sandbox: { provider: "e2b" } } },
  { dir: "packages/sandbox-providers/boxlite", kernelConfig: { sandbox: { provider: "boxlite" } } },
  { dir: "packages/sandbox-providers/tenki", kernelConfig: { sandbox: { provider: "tenki" } } },
  // Web providers register with @antler/tools-web; their SDKs and parsers load with the first call.
  ...[
    "brave",
    "crawl4ai",
    "duckduckgo",
    "exa",
    "fastcrw",
    "firecrawl",
    "groundroute",
    "infoquest",
    "jina",
    "searxng",
    "serper",
    "serply",
    "sofya",
    "tavily",
    "tencent-wsa",
  ].map((name): LightEntry => ({ dir: `packages/community-tools/${name}`, alongside: ["packages/community-tools/web"] })),
];

/** The package a module URL belongs to: `@scope/name` or `name` after the last `node_modules/`, else undefined. */
function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf("/node_modules/");
  if (at < 0) return undefined;
  const [first, second] = url.slice(at + "/node_modules/".length).split("/");
  return first?.startsWith("@") ? `${first}/${second}` : first;
}

function isHeavy(pkg: string): boolean {
  return HEAVY.some((h) => (h.endsWith("/") || h.endsWith("-") ? pkg.startsWith(h) : pkg === h));
}

// Written synchronously: the hooks run on their own thread, whose buffered stderr Node 24 may drop at exit.
const HOOK = `import { writeSync } from "node:fs";
export async function load(url, context, next) {
  const result = await next(url, context);
  writeSync(2, "LOADED " + url + "\\n");
  return result;
}`;

const work = mkdtempSync(join(tmpdir(), "antler-light-entries-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Imports `<dir>/dist/plugin.js` and boots a kernel with it in a child process; the URLs of every module loaded. */
function loadedBy(entry: LightEntry): { urls: string[]; name: string } {
  const pluginFile = join(REPO_ROOT, entry.dir, "dist/plugin.js");
  const script = `
import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});
const companions = [];
for (const url of ${JSON.stringify((entry.alongside ?? []).map((dir) => pathToFileURL(join(REPO_ROOT, dir, "dist/plugin.js")).href))}) {
  companions.push((await import(url)).default);
}
const { default: plugin } = await import(${JSON.stringify(pathToFileURL(pluginFile).href)});
const { createKernel } = await import(${JSON.stringify(pathToFileURL(KERNEL_DIST).href)});
const kernel = await createKernel({
  discover: false,
  cwd: ${JSON.stringify(work)},
  config: { base_dir: ${JSON.stringify(join(work, ".antler"))}, logging: { level: "error" }, ...${JSON.stringify(entry.kernelConfig ?? {})} },
  plugins: [...companions, ${entry.config ? `{ plugin, config: ${JSON.stringify(entry.config)} }` : "plugin"}],
});
process.stdout.write(JSON.stringify(kernel.plugins.map((p) => p.name)));
`;
  const file = join(work, `${entry.dir.replaceAll("/", "_")}.mjs`);
  writeFileSync(file, script);
  const child = spawnSync(process.execPath, [file], { cwd: work, encoding: "utf8", timeout: 60_000 });
  expect(child.status, `booting ${entry.dir}/dist/plugin.js failed:\n${child.stderr}`).toBe(0);
  const urls = child.stderr
    .split("\n")
    .filter((line) => line.startsWith("LOADED "))
    .map((line) => line.slice("LOADED ".length));
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, entry.dir, "package.json"), "utf8")) as { name: string };
  expect(JSON.parse(child.stdout) as string[], "the kernel booted with the plugin").toContain(pkg.name);
  return { urls, name: pkg.name };
}

describe("the module-package finder", () => {
  it("names the package after the last node_modules/, scoped or not, and none for workspace files", () => {
    expect(packageOf("file:///r/node_modules/.pnpm/kysely@0.29.9/node_modules/kysely/dist/esm/index.js")).toBe("kysely");
    expect(packageOf("file:///r/node_modules/.pnpm/x/node_modules/@langchain/core/dist/messages/index.js")).toBe("@langchain/core");
    expect(packageOf("file:///r/packages/kernel/dist/index.js")).toBeUndefined();
    expect(["@langchain/core", "langchain", "@opentelemetry/sdk-trace-base", "pg"].every(isHeavy)).toBe(true);
    expect(["zod", "pgpass", "@opentelemetry/api", "croner"].some(isHeavy)).toBe(false);
  });
});

describe.each(ENTRIES)("the light entry of $dir", (entry) => {
  it("is the package's ./plugin export, and importing it and running its setup loads no heavy dependency", () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, entry.dir, "package.json"), "utf8")) as {
      exports?: Record<string, Record<string, string>>;
    };
    expect(manifest.exports?.["./plugin"]).toEqual({
      "antler:source": "./src/plugin.ts",
      types: "./dist/plugin.d.ts",
      default: "./dist/plugin.js",
    });
    expect(existsSync(join(REPO_ROOT, entry.dir, "dist/plugin.js")), `${entry.dir} has no dist; run \`pnpm run build\``).toBe(true);
    const { urls } = loadedBy(entry);
    // The hook saw the boot: the kernel host (which loads zod) and the plugin's own entry.
    expect(urls.some((u) => packageOf(u) === "zod")).toBe(true);
    expect(urls).toContain(pathToFileURL(join(REPO_ROOT, entry.dir, "dist/plugin.js")).href);
    const heavy = [...new Set(urls.map(packageOf).filter((p): p is string => p !== undefined && isHeavy(p)))];
    expect(heavy, `heavy packages loaded by ${entry.dir}'s ./plugin and setup`).toEqual([]);
  });
});
