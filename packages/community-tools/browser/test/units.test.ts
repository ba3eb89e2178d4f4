import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAntlerError } from "@antler/kernel";
import { parseConfigText } from "@antler/kernel/config";
import { createTestKernel, runPluginConformance } from "@antler/kernel/testing";
import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import browserPlugin, {
  BASE_CHROMIUM_ARGS,
  BROWSER_TOOL_NAMES,
  BrowserErrorCodes,
  BrowserSessionManager,
  browserConfigSchema,
  browserlessUrl,
  chromiumArgs,
  createBrowserPlugin,
  createBrowserTools,
  formatSnapshot,
  isBrowserError,
  launchChromium,
  loadPlaywright,
  parseElementRef,
  redact,
  remoteBrowserSchema,
} from "../src/index.js";
import { runCommand } from "./fixtures.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

runPluginConformance(browserPlugin, {
  // The start check wants an executable file at executable_path; any will do, so the suite runs without Chromium.
  validConfig: { max_sessions: 2, allow_private_addresses: false, executable_path: process.execPath },
  invalidConfigs: [
    { max_sessions: 0 },
    { cdp_url: "http://127.0.0.1:9222" },
    { executable_path: "" },
    { remote: { provider: "browserless", endpoint: "wss://production-sfo.browserless.io?token=abc" } },
  ],
});

describe("remote browser config", () => {
  const endpoint = "wss://production-sfo.browserless.io";

  it("takes browserless with an endpoint and reads the token from BROWSERLESS_TOKEN by default", () => {
    const config = browserConfigSchema.parse({ remote: { provider: "browserless", endpoint } });
    expect(config.remote).toEqual({ provider: "browserless", endpoint, token_env: "BROWSERLESS_TOKEN" });
  });

  it("refuses a token written into the endpoint, pointing at token_env", () => {
    const result = browserConfigSchema.safeParse({ remote: { provider: "browserless", endpoint: `${endpoint}/?token=secret` } });
    expect(result.success).toBe(false);
    const issue = result.error?.issues[0];
    expect(issue?.path).toEqual(["remote", "endpoint"]);
    expect(issue?.message).toContain("BROWSERLESS_TOKEN environment variable");
  });

  it("refuses plain ws:// to a non-loopback host, which would send the token in clear text", () => {
    const result = browserConfigSchema.safeParse({ remote: { provider: "browserless", endpoint: "ws://browserless.internal:3000" } });
    expect(result.error?.issues[0]?.message).toContain("use wss://");
    expect(browserConfigSchema.safeParse({ remote: { provider: "browserless", endpoint: "ws://127.0.0.1:3000" } }).success).toBe(true);
  });

  it("refuses an unknown provider, an http endpoint and remote together with cdp_url", () => {
    expect(browserConfigSchema.safeParse({ remote: { provider: "steel", endpoint } }).success).toBe(false);
    expect(browserConfigSchema.safeParse({ remote: { provider: "browserless", endpoint: "https://x.example" } }).success).toBe(false);
    const both = browserConfigSchema.safeParse({
      remote: { provider: "browserless", endpoint },
      cdp_url: "http://127.0.0.1:9222",
      allow_unguarded_cdp: true,
    });
    expect(both.error?.issues.map((i) => i.path.join("."))).toContain("remote");
  });

  it("builds the documented browserless URL (token as query parameter) and redacts the token from any text", () => {
    const remote = remoteBrowserSchema.parse({ provider: "browserless", endpoint: `${endpoint}/chromium?timeout=60000` });
    expect(browserlessUrl(remote, "a b/c")).toBe(`${endpoint}/chromium?timeout=60000&token=a+b%2Fc`);
    expect(redact(`failed: ${browserlessUrl(remote, "a b/c")} (a b/c, a%20b%2Fc)`, "a b/c")).toBe(
      `failed: ${endpoint}/chromium?timeout=60000&token=*** (***, ***)`,
    );
  });

  it("fails the kernel start with REMOTE_AUTH naming the variable when the token is not set", async () => {
    const err = await createTestKernel({
      plugins: [
        { plugin: createBrowserPlugin({ env: {} }), config: { remote: { provider: "browserless", endpoint, token_env: "BL_TOKEN" } } },
      ],
    }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("ANTLER_ERR_KERNEL_START_FAILED");
    expect(isBrowserError((err as Error).cause, BrowserErrorCodes.REMOTE_AUTH)).toBe(true);
    expect((err as Error).message).toContain("export BL_TOKEN=");
  });

  it("starts with a token set and no local Chromium to check", async () => {
    const kernel = await createTestKernel({
      plugins: [
        {
          plugin: createBrowserPlugin({ env: { BL_TOKEN: "t" } }),
          config: { executable_path: "/nonexistent/chromium", remote: { provider: "browserless", endpoint, token_env: "BL_TOKEN" } },
        },
      ],
    });
    cleanups.push(() => kernel.close());
    expect(kernel.status).toBe("started");
  });
});

describe("config", () => {
  it("accepts the README's config.yaml example as written", async () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const document = parseConfigText(yaml, { env: {}, dir: tmpdir() });
    const entry = (document.data as { plugins: Array<{ package: string; config: unknown }> }).plugins[0];
    expect(entry?.package).toBe(browserPlugin.name);
    const config = browserConfigSchema.parse(entry?.config);
    expect(config.max_sessions).toBe(4);
    expect(config.executable_path).toBe("/usr/bin/chromium");
  });

  it("defaults to the system Chromium, 4 sessions and the guard on", () => {
    const config = browserConfigSchema.parse({});
    expect(config.executable_path).toBe("/usr/bin/chromium");
    expect(config.max_sessions).toBe(4);
    expect(config.allow_private_addresses).toBe(false);
    expect(config.allow_unguarded_cdp).toBe(false);
  });

  it("fails closed at boot when cdp_url is set without allow_unguarded_cdp, naming the key", async () => {
    const err = await createTestKernel({
      plugins: [{ plugin: browserPlugin, config: { cdp_url: "http://127.0.0.1:9222" } }],
      start: false,
    }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_CONFIG_INVALID")).toBe(true);
    expect((err as Error).message).toContain("cdp_url");
    expect((err as Error).message).toContain("allow_unguarded_cdp: true");
  });

  it("accepts cdp_url with the explicit allow_unguarded_cdp opt-in", () => {
    expect(browserConfigSchema.safeParse({ cdp_url: "http://127.0.0.1:9222", allow_unguarded_cdp: true }).success).toBe(true);
  });

  it("refuses a manager built in code with cdp_url and no opt-in", () => {
    const config = { ...browserConfigSchema.parse({}), cdp_url: "http://127.0.0.1:9222" };
    let err: unknown;
    try {
      new BrowserSessionManager({ config });
    } catch (e) {
      err = e;
    }
    expect(isBrowserError(err, BrowserErrorCodes.UNSAFE_CONFIG)).toBe(true);
  });
});

describe("launch flags", () => {
  it("adds --no-sandbox only when running as root", () => {
    expect(chromiumArgs({ runningAsRoot: true })).toContain("--no-sandbox");
    expect(chromiumArgs({ runningAsRoot: false })).not.toContain("--no-sandbox");
  });

  it("always disables Chromium's background networking and appends extra_args last", () => {
    const args = chromiumArgs({ runningAsRoot: false, extraArgs: ["--lang=de"] });
    for (const flag of [
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ]) {
      expect(args).toContain(flag);
    }
    expect(args).toEqual([...BASE_CHROMIUM_ARGS, "--lang=de"]);
  });

  it("reports a missing browser with the path and both fixes", async () => {
    const err = await launchChromium({ executablePath: "/nonexistent/chromium", headless: true }).catch((e: unknown) => e);
    expect(isBrowserError(err, BrowserErrorCodes.UNAVAILABLE)).toBe(true);
    expect((err as Error).message).toContain("/nonexistent/chromium");
    expect((err as Error).message).toContain("apt-get install -y chromium");
    expect((err as Error).message).toContain("executable_path");
  });

  it("reports a file that is not executable", async () => {
    const dir = mkdtempSync(join(tmpdir(), "antler-browser-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const err = await launchChromium({ executablePath: dir, headless: true }).catch((e: unknown) => e);
    expect(isBrowserError(err, BrowserErrorCodes.UNAVAILABLE)).toBe(true);
  });
});

describe("tools", () => {
  it("contributes the eight browser tools and web_capture", async () => {
    const kernel = await createTestKernel({ plugins: [browserPlugin], start: false });
    cleanups.push(() => kernel.close());
    const names = (await kernel.assembleTools()).filter((e) => e.plugin === "@antler/tools-browser").map((e) => e.tool.name);
    expect(names.sort()).toEqual([...BROWSER_TOOL_NAMES, "web_capture"].sort());
  });

  it("puts web_capture in the web group: a read-only agent gets it without the interactive browser tools", async () => {
    const kernel = await createTestKernel({ plugins: [browserPlugin], start: false });
    cleanups.push(() => kernel.close());
    const names = (await kernel.getAvailableTools({ groups: ["web"] })).map((t) => t.name);
    expect(names).toContain("web_capture");
    expect(names.filter((n) => n.startsWith("browser_"))).toEqual([]);
    expect((await kernel.getAvailableTools({ groups: ["browser"] })).map((t) => t.name)).not.toContain("web_capture");
  });

  it("puts every browser tool in the `browser` group: a browser-only agent gets them all, a web-only agent none", async () => {
    const kernel = await createTestKernel({ plugins: [browserPlugin], start: false });
    cleanups.push(() => kernel.close());
    const ours = (tools: Array<{ name: string }>) =>
      tools.map((t) => t.name).filter((n) => (BROWSER_TOOL_NAMES as readonly string[]).includes(n));
    expect(ours(await kernel.getAvailableTools({ groups: ["browser"] })).sort()).toEqual([...BROWSER_TOOL_NAMES].sort());
    expect(ours(await kernel.getAvailableTools({ groups: ["web", "bash", "file:read", "file:write"] }))).toEqual([]);
  });

  it("answers a tool call with the actionable missing-browser error instead of throwing", async () => {
    const manager = new BrowserSessionManager({ config: browserConfigSchema.parse({ executable_path: "/nonexistent/chromium" }) });
    cleanups.push(() => manager.close());
    const navigate = createBrowserTools({ manager, baseDir: tmpdir() }).find((t) => t.name === "browser_navigate");
    const result = (await navigate?.invoke(
      { type: "tool_call", id: "c1", name: "browser_navigate", args: { url: "https://example.org/" } },
      { context: { thread_id: "t1", user_id: "u1" } },
    )) as ToolMessage;
    expect(result.status).toBe("error");
    expect(String(result.content)).toMatch(/^Error: The browser is not available: no file at that path/);
    expect(String(result.content)).toContain("apt-get install -y chromium");
  });

  it("refuses a tool call of a run without thread_id", async () => {
    const manager = new BrowserSessionManager({ config: browserConfigSchema.parse({}) });
    cleanups.push(() => manager.close());
    const snapshot = createBrowserTools({ manager, baseDir: tmpdir() }).find((t) => t.name === "browser_snapshot");
    const result = (await snapshot?.invoke(
      { type: "tool_call", id: "c2", name: "browser_snapshot", args: {} },
      { context: {} },
    )) as ToolMessage;
    expect(result.status).toBe("error");
    expect(String(result.content)).toContain("no thread_id");
  });
});

describe("kernel start with the browser tools enabled", () => {
  it("fails fast with BROWSER_UNAVAILABLE and the fix when executable_path names no file", async () => {
    const err = await createTestKernel({
      plugins: [{ plugin: browserPlugin, config: { executable_path: "/nonexistent/chromium" } }],
    }).catch((e: unknown) => e);
    expect(isAntlerError(err)).toBe(true);
    expect((err as { code?: string }).code).toBe("ANTLER_ERR_KERNEL_START_FAILED");
    expect(isBrowserError((err as Error).cause, BrowserErrorCodes.UNAVAILABLE)).toBe(true);
    const message = (err as Error).message;
    expect(message).toContain("/nonexistent/chromium");
    expect(message).toContain("apt-get install -y chromium");
    expect(message).toContain("executable_path");
  });

  it("fails fast when executable_path is a folder, not a program", async () => {
    const dir = mkdtempSync(join(tmpdir(), "antler-browser-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const err = await createTestKernel({ plugins: [{ plugin: browserPlugin, config: { executable_path: dir } }] }).catch((e: unknown) => e);
    expect(isBrowserError((err as Error).cause, BrowserErrorCodes.UNAVAILABLE)).toBe(true);
    expect((err as Error).message).toContain(dir);
  });

  it("reports a Playwright that cannot be imported with BROWSER_UNAVAILABLE and the fix", async () => {
    const err = await loadPlaywright("playwright-core-not-installed").catch((e: unknown) => e);
    expect(isBrowserError(err, BrowserErrorCodes.UNAVAILABLE)).toBe(true);
    expect((err as Error).message).toContain("cannot load Playwright (playwright-core-not-installed)");
    expect((err as Error).message).toContain("pnpm install");
  });

  it("loads the installed Playwright's Chromium driver", async () => {
    expect(typeof (await loadPlaywright()).launch).toBe("function");
  });

  it("starts when executable_path is an executable file", async () => {
    const kernel = await createTestKernel({ plugins: [{ plugin: browserPlugin, config: { executable_path: process.execPath } }] });
    cleanups.push(() => kernel.close());
    expect(kernel.status).toBe("started");
  });
});

describe("antler browser check", () => {
  it("exits 1 with the install hint when the configured binary is missing", async () => {
    const kernel = await createTestKernel({
      plugins: [{ plugin: browserPlugin, config: { executable_path: "/nonexistent/chromium" } }],
      start: false,
    });
    cleanups.push(() => kernel.close());
    const result = await runCommand(kernel, "browser check");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("/nonexistent/chromium");
    expect(result.stderr).toContain("apt-get install -y chromium");
  });
});

describe("formatSnapshot", () => {
  const base = { title: "T", url: "https://example.org/", lines: ['[1] link "a" -> https://example.org/a'], nextRef: 2, refCount: 1 };

  it("says when the snapshot was cut and where to read the rest", () => {
    const text = formatSnapshot({ ...base, truncated: true });
    expect(text).toMatch(
      /\[snapshot cut at \d+ characters \(snapshot_max_chars\); 1 interactive elements are listed above\. Use browser_get_text/,
    );
  });

  it("lists blocked requests with their reasons", () => {
    const text = formatSnapshot(
      { ...base, truncated: false },
      { blocked: [{ url: "http://10.0.0.1/x", reason: "host 10.0.0.1 is a private address", kind: "image" }], blockedOmitted: 3 },
    );
    expect(text).toContain("- image http://10.0.0.1/x: host 10.0.0.1 is a private address");
    expect(text).toContain("... and 3 more");
  });
});

describe("parseElementRef", () => {
  it("reads main-frame numbers and f<frame>e<element> frame refs, as numbers or strings, with or without brackets", () => {
    expect(parseElementRef(12)).toEqual({ frameId: undefined, element: 12, label: "[12]" });
    expect(parseElementRef("12")).toEqual({ frameId: undefined, element: 12, label: "[12]" });
    expect(parseElementRef("[f2e7]")).toEqual({ frameId: 2, element: 7, label: "[f2e7]" });
    expect(parseElementRef(" F3E40 ")).toEqual({ frameId: 3, element: 40, label: "[f3e40]" });
  });

  it("refuses anything else with a STALE_REF error that explains the two shapes", () => {
    for (const bad of [0, -1, 1.5, "", "e5", "f2", "f2e", "12a", "f1e0"]) {
      let caught: unknown;
      try {
        parseElementRef(bad);
      } catch (err) {
        caught = err;
      }
      expect(isBrowserError(caught, BrowserErrorCodes.STALE_REF)).toBe(true);
      expect((caught as Error).message).toContain("f2e12 for an element inside frame f2");
    }
  });
});
