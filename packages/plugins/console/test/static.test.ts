import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { AntlerError, type CodePlugin, definePlugin } from "@antler/kernel";
import { captureLogs, scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient, provideRunAdmission, RuntimeErrorCodes } from "@antler/plugin-runtime";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import consolePlugin, { ConsoleErrorCodes } from "../src/index.js";
import { StaticSite } from "../src/static.js";
import { ALICE_KEY, ensureConsoleBuilt, webDist } from "./harness.js";

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function serve(
  consoleConfig: Record<string, unknown> = {},
  extra: { plugins?: CodePlugin[]; role?: string } = {},
): Promise<RunningGateway> {
  const dir = mkdtempSync(join(tmpdir(), "antler-console-static-"));
  const client = await AntlerClient.create({
    config: { base_dir: dir, models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
    plugins: [scriptedModelsPlugin({ m: [{ text: "hi" }] }), { plugin: consolePlugin, config: consoleConfig }, ...(extra.plugins ?? [])],
    cwd: dir,
    env: {},
    discover: false,
    logger: captureLogs({ level: "warn" }).logger,
  });
  const gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE_KEY, user: "alice", role: extra.role }] } },
  });
  open.push(async () => {
    await gateway.close();
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return gateway;
}

function entryScript(): string {
  const html = readFileSync(join(webDist, "index.html"), "utf8");
  const src = /<script type="module" crossorigin src="([^"]+)"/.exec(html)?.[1];
  if (!src) throw new Error("no entry script in the built index.html");
  return src;
}

describe("the console's static files on the gateway", () => {
  beforeAll(ensureConsoleBuilt, 120_000);

  it("serves the shell at / and at every client-side route, revalidated on each load, with a strict CSP", async () => {
    const gateway = await serve();
    for (const path of ["/", "/threads", "/threads/t-1", "/batches", "/schedules", "/status"]) {
      const response = await fetch(`${gateway.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
      // The shell's one inline script (the theme, before the first paint) is allowed by its hash, nothing else inline.
      const html = await response.text();
      const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? "");
      expect(inline).toHaveLength(1);
      const hash = createHash("sha256")
        .update(inline[0] ?? "")
        .digest("base64");
      expect(response.headers.get("content-security-policy")).toContain(`script-src 'self' 'sha256-${hash}';`);
      expect(html).toContain('<div id="root"></div>');
    }
  });

  it("serves hashed assets as immutable, gzipped when asked, and answers a matching ETag with 304", async () => {
    const gateway = await serve();
    const url = `${gateway.url}${entryScript()}`;
    const plain = await fetch(url, { headers: { "accept-encoding": "identity" } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const body = Buffer.from(await plain.arrayBuffer());
    const { request } = await import("node:http");
    const gz = await new Promise<{ encoding: string | undefined; bytes: Buffer }>((resolve, reject) => {
      request(url, { headers: { "accept-encoding": "gzip" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ encoding: res.headers["content-encoding"], bytes: Buffer.concat(chunks) }));
      })
        .on("error", reject)
        .end();
    });
    expect(gz.encoding).toBe("gzip");
    expect(gunzipSync(gz.bytes).equals(body)).toBe(true);
    const again = await fetch(url, { headers: { "if-none-match": plain.headers.get("etag") ?? "" } });
    expect(again.status).toBe(304);
  });

  it("serves brotli when the client accepts br (preferred over gzip), gzip when only that, and neither when br and gzip are refused", async () => {
    const gateway = await serve();
    const { request } = await import("node:http");
    // node:http, not fetch: fetch would decode the body and hide the content coding.
    const get = (path: string, acceptEncoding: string) =>
      new Promise<{ encoding: string | undefined; vary: string | undefined; length: number; bytes: Buffer }>((resolve, reject) => {
        request(`${gateway.url}${path}`, { headers: { "accept-encoding": acceptEncoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              encoding: res.headers["content-encoding"],
              vary: res.headers.vary,
              length: Number(res.headers["content-length"]),
              bytes: Buffer.concat(chunks),
            }),
          );
        })
          .on("error", reject)
          .end();
      });
    const script = entryScript();
    const css = /<link rel="stylesheet" crossorigin href="([^"]+)"/.exec(readFileSync(join(webDist, "index.html"), "utf8"))?.[1] ?? "";
    for (const path of [script, css, "/", "/threads/t-1"]) {
      const plain = await get(path, "identity");
      expect(plain.encoding, path).toBeUndefined();
      const br = await get(path, "gzip, deflate, br, zstd");
      expect(br.encoding, path).toBe("br");
      expect(br.vary).toBe("accept-encoding");
      expect(br.length).toBe(br.bytes.length);
      expect(brotliDecompressSync(br.bytes).equals(plain.bytes), path).toBe(true);
      expect(br.bytes.length).toBeLessThan(plain.bytes.length);
      expect((await get(path, "br;q=0, gzip")).encoding, path).toBe("gzip");
      expect((await get(path, "br;q=0, gzip;q=0")).encoding, path).toBeUndefined();
    }
    // Brotli at its best quality beats gzip on the entry script.
    expect((await get(script, "br")).length).toBeLessThan((await get(script, "gzip")).length);
  });

  it("keeps /api, /health and unknown paths as they were: JSON 401/404, never the shell", async () => {
    const gateway = await serve();
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    const unauthenticated = await fetch(`${gateway.url}/api/threads`);
    expect(unauthenticated.status).toBe(401);
    expect(((await unauthenticated.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_GATEWAY_UNAUTHENTICATED");
    const unknown = await fetch(`${gateway.url}/api/nope`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/json");
    expect((await fetch(`${gateway.url}/elsewhere`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/`, { method: "POST" })).status).toBe(405);
  });

  it("refuses asset names that try to leave the assets folder", async () => {
    const gateway = await serve();
    for (const path of ["/assets/..%2f..%2fpackage.json", "/assets/%2e%2e%2findex.html", "/assets/.hidden", "/assets/missing-abc123.js"]) {
      const response = await fetch(`${gateway.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.text()).not.toContain('"name": "@antler/plugin-console"');
    }
  });

  it("answers 503 ANTLER_ERR_CONSOLE_NOT_BUILT with the build command when static_dir has no index.html", async () => {
    const empty = mkdtempSync(join(tmpdir(), "antler-console-empty-"));
    open.push(async () => rmSync(empty, { recursive: true, force: true }));
    const gateway = await serve({ static_dir: empty });
    const response = await fetch(`${gateway.url}/`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string; hint: string } };
    expect(body.error.code).toBe(ConsoleErrorCodes.NOT_BUILT);
    expect(body.error.message).toContain(empty);
    expect(body.error.hint).toContain("pnpm run build");
  });

  it("rejects an unknown console config key at boot, naming it", async () => {
    await expect(serve({ statik_dir: "/tmp" })).rejects.toThrow(/statik_dir/);
  });

  it("serves /api/console/status behind the gateway's auth: plugins, models and upload limits", async () => {
    const gateway = await serve();
    expect((await fetch(`${gateway.url}/api/console/status`)).status).toBe(401);
    const response = await fetch(`${gateway.url}/api/console/status`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      plugins: Array<{ name: string }>;
      models: Array<{ name: string }>;
      uploads: { max_files: number; max_file_bytes: number };
    };
    expect(body.plugins.map((p) => p.name)).toContain("@antler/plugin-console");
    expect(body.models.map((m) => m.name)).toEqual(["m"]);
    expect(body.uploads.max_files).toBeGreaterThan(0);
    expect(body.uploads.max_file_bytes).toBeGreaterThan(0);
  });

  it("lists in /api/console/status only the models the key's role may run on", async () => {
    // What an authorization plugin does: refuse every model to role `viewer` before a run starts.
    const viewerRunsNothing = definePlugin({
      name: "test-viewer-admission",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        provideRunAdmission(ctx, (run) => {
          if (run.userRole === "viewer") throw new AntlerError(RuntimeErrorCodes.MODEL_FORBIDDEN, `viewer may not use ${run.modelName}`);
        });
      },
    });
    const gateway = await serve({}, { plugins: [viewerRunsNothing], role: "viewer" });
    const response = await fetch(`${gateway.url}/api/console/status`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { models: unknown[] }).models).toEqual([]);
  });
});

describe("StaticSite's asset cache", () => {
  function site(): { dir: string; site: StaticSite; get(path: string): Promise<Response> } {
    const dir = mkdtempSync(join(tmpdir(), "antler-console-site-"));
    open.push(async () => rmSync(dir, { recursive: true, force: true }));
    const staticSite = new StaticSite(dir);
    return {
      dir,
      site: staticSite,
      get: (path) => {
        const request = new Request(`http://127.0.0.1${path}`);
        return path.startsWith("/assets/") ? staticSite.asset(request) : staticSite.shell(request);
      },
    };
  }
  function writeBuild(dir: string, assets: Record<string, string>): void {
    mkdirSync(join(dir, "assets"), { recursive: true });
    writeFileSync(join(dir, "index.html"), '<!doctype html><div id="root"></div>');
    for (const [name, text] of Object.entries(assets)) writeFileSync(join(dir, "assets", name), text);
  }

  it("holds only files the build has: a thousand unknown names are 404s and leave the cache as it was", async () => {
    const { dir, site: s, get } = site();
    writeBuild(dir, { "app-1.js": "console.log(1)", "app-1.css": "body{}" });
    expect((await get("/assets/app-1.js")).status).toBe(200);
    for (let i = 0; i < 1000; i++) expect((await get(`/assets/missing-${i}.js`)).status).toBe(404);
    expect(s.cachedAssetCount).toBe(1);
    expect((await get("/assets/app-1.css")).status).toBe(200);
    expect(s.cachedAssetCount).toBe(2);
  });

  it("reads the list of assets once, with the shell: a file added later is a 404", async () => {
    const { dir, get } = site();
    writeBuild(dir, { "app-1.js": "1" });
    expect((await get("/")).status).toBe(200);
    writeFileSync(join(dir, "assets", "late-2.js"), "2");
    expect((await get("/assets/late-2.js")).status).toBe(404);
    expect((await get("/assets/app-1.js")).status).toBe(200);
  });

  it("finds a build that lands while the server runs: 503 and 404 before, the shell and its assets after", async () => {
    const { dir, get } = site();
    expect((await get("/")).status).toBe(503);
    expect((await get("/assets/app-1.js")).status).toBe(404);
    writeBuild(dir, { "app-1.js": "1" });
    expect((await get("/")).status).toBe(200);
    expect((await get("/assets/app-1.js")).status).toBe(200);
  });
});
