import { randomUUID } from "node:crypto";
import { isAntlerError } from "@antler/kernel";
import { captureLogs, createTestKernel, describeWithChromium } from "@antler/kernel/testing";
import { validatePublicHttpUrl } from "@antler/tools-web";
import { afterEach, expect, it } from "vitest";
import {
  type BrowserConfigInput,
  BrowserErrorCodes,
  BrowserSessionManager,
  browserConfigSchema,
  type CheckUrl,
  checkBrowser,
  createBrowserPlugin,
  isBrowserError,
  UNGUARDED_CDP_WARNING,
} from "../src/index.js";
import {
  type DebuggableChromium,
  html,
  processesWithMarker,
  startBrowserlessStandIn,
  startDebuggableChromium,
  startSite,
  type TestSite,
} from "./fixtures.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function site(routes: Parameters<typeof startSite>[0]): Promise<TestSite> {
  const s = await startSite(routes);
  cleanups.push(() => s.close());
  return s;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );
}

/** The SSRF check with one loopback site treated as a public one; every other loopback address stays refused. */
function publicSite(s: TestSite): CheckUrl {
  return async (url, options) => {
    const parsed = new URL(url);
    if (parsed.origin === s.origin) return { ok: true, url: parsed, addresses: ["93.184.216.34"] };
    return validatePublicHttpUrl(url, options);
  };
}

const thread = (threadId: string) => ({ userId: "u1", threadId });

describeWithChromium("@antler/tools-browser with a remote browser (browserless stand-in, cdp_url)", (executablePath) => {
  // Local launches get this marker, so a test can prove no local Chromium was started.
  const marker = `antler-remote-test-${randomUUID()}`;
  const token = `tok-${randomUUID()}`;

  async function remoteChromium(): Promise<DebuggableChromium> {
    const chromium = await startDebuggableChromium(executablePath);
    cleanups.push(() => chromium.close());
    return chromium;
  }

  function manager(config: BrowserConfigInput, options: { checkUrl?: CheckUrl; env?: Record<string, string> } = {}) {
    const m = new BrowserSessionManager({
      config: browserConfigSchema.parse({ executable_path: executablePath, extra_args: [`--antler-marker=${marker}`], ...config }),
      checkUrl: options.checkUrl,
      env: options.env ?? {},
    });
    cleanups.push(() => m.close());
    return m;
  }

  it("browses through browserless with the token as its query parameter, and launches no local Chromium", async () => {
    const chromium = await remoteChromium();
    const standIn = await startBrowserlessStandIn(chromium, token);
    cleanups.push(() => standIn.close());
    const s = await site({ "/": html("<p>served to the remote browser</p>") });
    const m = manager(
      { remote: { provider: "browserless", endpoint: standIn.endpoint, token_env: "BL_TOKEN" } },
      { checkUrl: publicSite(s), env: { BL_TOKEN: token } },
    );
    const snap = await m.withSession(thread("t"), async (session) => {
      await session.navigate(`${s.origin}/`);
      return session.snapshot();
    });
    expect(snap).toContain("served to the remote browser");
    expect(standIn.upgrades).toEqual([{ path: "/", token, accepted: true }]);
    expect(processesWithMarker(marker)).toEqual([]);
    await m.close();
    expect(chromium.running()).toBe(true);
  });

  it("still refuses a private address through the remote browser: navigations, sub-resources and iframes never reach it", async () => {
    const chromium = await remoteChromium();
    const standIn = await startBrowserlessStandIn(chromium, token);
    cleanups.push(() => standIn.close());
    const internal = await site({ "/": html("<p>internal</p>"), "/pixel.png": "x", "/frame": html("<p>secret frame</p>") });
    const s = await site({
      "/": html(`<p>public page</p><img src="${internal.origin}/pixel.png" alt="p"><iframe src="${internal.origin}/frame"></iframe>`),
    });
    const m = manager(
      { remote: { provider: "browserless", endpoint: standIn.endpoint, token_env: "BL_TOKEN" } },
      { checkUrl: publicSite(s), env: { BL_TOKEN: token } },
    );

    const blocked = await rejection(m.withSession(thread("t"), (session) => session.navigate(`${internal.origin}/`)));
    expect(isBrowserError(blocked, BrowserErrorCodes.BLOCKED_URL)).toBe(true);
    expect((blocked as Error).message).toContain("loopback address");

    const snap = await m.withSession(thread("t"), async (session) => {
      await session.navigate(`${s.origin}/`);
      return session.snapshot();
    });
    expect(snap).toContain("public page");
    expect(snap).toContain(`${internal.origin}/pixel.png`);
    expect(snap).toContain("blocked by the SSRF guard");
    expect(snap).not.toContain("secret frame");
    expect(internal.hits).toEqual([]);
  });

  it("answers a wrong token with REMOTE_AUTH naming the variable, never echoing the token, and connects once it is fixed", async () => {
    const chromium = await remoteChromium();
    const standIn = await startBrowserlessStandIn(chromium, token);
    cleanups.push(() => standIn.close());
    const env: Record<string, string> = { BL_TOKEN: "wrong-token-value" };
    const m = manager({ remote: { provider: "browserless", endpoint: standIn.endpoint, token_env: "BL_TOKEN" } }, { env });
    const err = await rejection(m.withSession(thread("t"), async () => {}));
    expect(isBrowserError(err, BrowserErrorCodes.REMOTE_AUTH)).toBe(true);
    const message = (err as Error).message;
    expect(message).toContain("refused the API token from BL_TOKEN");
    expect(message).toContain("401");
    expect(message).not.toContain("wrong-token-value");
    expect(String((err as Error).cause)).not.toContain("wrong-token-value");
    expect(standIn.upgrades).toEqual([{ path: "/", token: "wrong-token-value", accepted: false }]);

    // The token is read at each connect, and a failed connect is not cached.
    env.BL_TOKEN = token;
    await m.withSession(thread("t"), (session) => session.snapshot());
    expect(standIn.upgrades.at(-1)).toEqual({ path: "/", token, accepted: true });
  });

  it("antler browser check connects to the remote browser and names it, not a local binary", async () => {
    const chromium = await remoteChromium();
    const standIn = await startBrowserlessStandIn(chromium, token);
    cleanups.push(() => standIn.close());
    const config = browserConfigSchema.parse({ remote: { provider: "browserless", endpoint: standIn.endpoint, token_env: "BL_TOKEN" } });
    const result = await checkBrowser(config, { BL_TOKEN: token });
    expect(result.target).toBe(`browserless ${standIn.endpoint}`);
    expect(result.version).toMatch(/^\d+\./);
    expect(chromium.running()).toBe(true);
  });

  it("cdp_url fails closed at boot without allow_unguarded_cdp; with it, the kernel attaches, logs a warning, and still guards its own contexts", async () => {
    const chromium = await remoteChromium();
    const refused = await createTestKernel({
      plugins: [{ plugin: createBrowserPlugin(), config: { cdp_url: chromium.httpUrl } }],
      start: false,
    }).catch((e: unknown) => e);
    expect(isAntlerError(refused)).toBe(true);
    expect((refused as Error).message).toContain("cdp_url");
    expect((refused as Error).message).toContain("allow_unguarded_cdp: true");

    const s = await site({ "/": html("<p>via cdp</p>") });
    const internal = await site({ "/": html("<p>internal</p>") });
    let m: BrowserSessionManager | undefined;
    const logs = captureLogs();
    const kernel = await createTestKernel({
      plugins: [
        {
          plugin: createBrowserPlugin({ checkUrl: publicSite(s), onManager: (created) => (m = created) }),
          config: { cdp_url: chromium.httpUrl, allow_unguarded_cdp: true },
        },
      ],
      logger: logs.logger,
    });
    cleanups.push(() => kernel.close());
    const warning = logs.lines.find((line) => line.msg === UNGUARDED_CDP_WARNING);
    expect(warning?.level).toBe("warn");
    expect(warning?.cdp_url).toBe(chromium.httpUrl);

    const manager = m as BrowserSessionManager;
    const snap = await manager.withSession(thread("cdp"), async (session) => {
      await session.navigate(`${s.origin}/`);
      return session.snapshot();
    });
    expect(snap).toContain("via cdp");
    const blocked = await rejection(manager.withSession(thread("cdp"), (session) => session.navigate(`${internal.origin}/`)));
    expect(isBrowserError(blocked, BrowserErrorCodes.BLOCKED_URL)).toBe(true);
    expect(internal.hits).toEqual([]);
    await kernel.close();
    expect(chromium.running()).toBe(true);
  });
});
