import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAntlerError, threadPaths } from "@antler/kernel";
import { captureLogs } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BOOTSTRAP_COMMAND, createSdkRemote, E2BSandboxProvider, e2bConfigSchema } from "../src/index.js";

/**
 * A loopback stand-in for E2B: the control plane (api.e2b.app) routes the SDK calls for create, list, connect,
 * getInfo and kill, answered with the shapes of E2B's OpenAPI schema; and of the in-sandbox API (envd) the parts
 * Antler uses at acquire: `process.Process/Start` (Connect server streaming, JSON codec), answering every command
 * with exit 0, and the file upload `POST /files` (multipart), whose files land in a per-sandbox map. envd can be
 * switched off, and then refuses everything.
 */
interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

interface ControlPlane {
  url: string;
  requests: Recorded[];
  live: Set<string>;
  /** Files written into each sandbox through envd, by sandbox id and path. */
  files: Map<string, Map<string, Buffer>>;
  /** When false, every envd request is refused with 501. */
  envdUp: boolean;
  /** Replaces the answer to `POST /v2/sandboxes` once. */
  failNextCreate(status: number, body: unknown): void;
  close(): Promise<void>;
}

const API_KEY = "e2b_loopback_test_key";
const ENVD_TOKEN = "envd-token-abc";

function sandboxJson(sandboxID: string, templateID: string): Record<string, unknown> {
  return { sandboxID, templateID, clientID: "loopback-client", envdVersion: "0.2.4", envdAccessToken: ENVD_TOKEN, domain: null };
}

async function startControlPlane(): Promise<ControlPlane> {
  const requests: Recorded[] = [];
  const live = new Set<string>();
  const templates = new Map<string, string>();
  const metadataOf = new Map<string, Record<string, string>>();
  const files = new Map<string, Map<string, Buffer>>();
  const envd = { up: true };
  let created = 0;
  let nextCreateFailure: { status: number; body: unknown } | null = null;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const rawBytes = Buffer.concat(chunks);
      const raw = rawBytes.toString("utf8");
      let body: unknown = raw;
      // Control-plane bodies are plain JSON; envd's Connect streaming bodies are enveloped and stay raw text.
      if (raw && String(req.headers["content-type"] ?? "").startsWith("application/json")) body = JSON.parse(raw) as unknown;
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      requests.push({ method: req.method ?? "", path, headers: req.headers, body });
      const json = (status: number, value: unknown): void => {
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      };
      const authorized = req.headers["x-api-key"] === API_KEY;
      const connectMatch = path.match(/^\/v2\/sandboxes\/([^/]+)\/connect$/);
      const sandboxMatch = path.match(/^\/sandboxes\/([^/]+)$/);
      if (req.method === "POST" && path === "/v2/sandboxes") {
        if (!authorized) return json(401, { code: 401, message: "Invalid API key" });
        if (nextCreateFailure) {
          const failure = nextCreateFailure;
          nextCreateFailure = null;
          return json(failure.status, failure.body);
        }
        const id = `isbx${++created}loop`;
        const templateID = String((body as { templateID?: unknown }).templateID ?? "base");
        live.add(id);
        templates.set(id, templateID);
        metadataOf.set(id, { ...((body as { metadata?: Record<string, string> }).metadata ?? {}) });
        return json(201, sandboxJson(id, templateID));
      }
      if (req.method === "GET" && path === "/v2/sandboxes") {
        if (!authorized) return json(401, { code: 401, message: "Invalid API key" });
        // `metadata` is itself a query string of URI-encoded pairs, as the SDK sends it.
        const query = new URL(req.url ?? "/", "http://x").searchParams;
        const wanted = Object.fromEntries(
          [...new URLSearchParams(query.get("metadata") ?? "")].map(([k, v]) => [decodeURIComponent(k), decodeURIComponent(v)]),
        );
        const states = query.getAll("state");
        const listed = [...live]
          .filter((id) => Object.entries(wanted).every(([k, v]) => metadataOf.get(id)?.[k] === v))
          .filter(() => states.length === 0 || states.includes("running"))
          .map((id) => ({
            sandboxID: id,
            templateID: templates.get(id) ?? "base",
            clientID: "loopback-client",
            startedAt: "2025-01-01T00:00:00.000Z",
            endAt: "2025-01-01T00:30:00.000Z",
            cpuCount: 2,
            memoryMB: 512,
            diskSizeMB: 1024,
            metadata: metadataOf.get(id) ?? {},
            state: "running",
            envdVersion: "0.2.4",
          }));
        return json(200, listed);
      }
      const sandboxOfEnvd = String(req.headers["e2b-sandbox-id"] ?? "");
      if (envd.up && sandboxOfEnvd !== "" && live.has(sandboxOfEnvd)) {
        if (req.method === "POST" && path === "/process.Process/Start") {
          // Connect server streaming: enveloped JSON messages (flags byte, big-endian length), then end-of-stream.
          const frame = (flags: number, message: unknown): Buffer => {
            const payload = Buffer.from(JSON.stringify(message));
            const head = Buffer.alloc(5);
            head.writeUInt8(flags, 0);
            head.writeUInt32BE(payload.length, 1);
            return Buffer.concat([head, payload]);
          };
          res.writeHead(200, { "content-type": "application/connect+json" });
          res.end(
            Buffer.concat([
              frame(0, { event: { start: { pid: 42 } } }),
              frame(0, { event: { end: { exitCode: 0, exited: true, status: "exit status 0" } } }),
              frame(2, {}),
            ]),
          );
          return;
        }
        if (req.method === "POST" && path === "/files") {
          const query = new URL(req.url ?? "/", "http://x").searchParams;
          const form = await new Response(rawBytes, { headers: { "content-type": String(req.headers["content-type"]) } }).formData();
          const store = files.get(sandboxOfEnvd) ?? new Map<string, Buffer>();
          files.set(sandboxOfEnvd, store);
          const written: unknown[] = [];
          for (const value of form.getAll("file")) {
            const file = value as File;
            const target = query.get("path") ?? file.name;
            store.set(target, Buffer.from(await file.arrayBuffer()));
            written.push({ name: target.split("/").pop(), type: "file", path: target });
          }
          return json(200, written);
        }
      }
      if (connectMatch && req.method === "POST") {
        const id = connectMatch[1] as string;
        if (!live.has(id)) return json(404, { code: 404, message: `sandbox ${id} not found` });
        return json(200, sandboxJson(id, templates.get(id) ?? "base"));
      }
      if (sandboxMatch) {
        const id = sandboxMatch[1] as string;
        if (!authorized) return json(401, { code: 401, message: "Invalid API key" });
        if (!live.has(id)) return json(404, { code: 404, message: `sandbox ${id} not found` });
        if (req.method === "DELETE") {
          live.delete(id);
          res.writeHead(204).end();
          return;
        }
        if (req.method === "GET") {
          return json(200, {
            ...sandboxJson(id, templates.get(id) ?? "base"),
            alias: "loopback",
            cpuCount: 2,
            memoryMB: 512,
            diskSizeMB: 1024,
            metadata: {},
            startedAt: "2025-01-01T00:00:00.000Z",
            endAt: "2025-01-01T00:30:00.000Z",
            state: "running",
          });
        }
      }
      // envd (commands, files) is not emulated.
      json(501, { code: "unimplemented", message: `loopback control plane does not serve ${req.method} ${path}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    live,
    files,
    get envdUp() {
      return envd.up;
    },
    set envdUp(value: boolean) {
      envd.up = value;
    },
    failNextCreate(status, body) {
      nextCreateFailure = { status, body };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        // The SDK keeps pooled keep-alive connections; drop them so close() returns.
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

let plane: ControlPlane;
let root: string;
let providers: E2BSandboxProvider[];

beforeEach(async () => {
  plane = await startControlPlane();
  root = await mkdtemp(join(tmpdir(), "antler-e2b-http-"));
  providers = [];
});

afterEach(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await plane.close();
  await rm(root, { recursive: true, force: true });
});

function remote(apiKey = API_KEY) {
  return createSdkRemote({ apiKey, apiUrl: plane.url, sandboxUrl: plane.url, requestTimeoutMs: 5000 });
}

describe("createSdkRemote against a loopback E2B control plane", () => {
  it("creates a sandbox with POST /v2/sandboxes carrying the key, template, timeout and metadata", async () => {
    const sandbox = await remote().create({ template: "antler-tmpl", timeoutMs: 90_500, metadata: { antler_thread: "t1" } });

    expect(sandbox.sandboxId).toBe("isbx1loop");
    const create = plane.requests.find((r) => r.method === "POST" && r.path === "/v2/sandboxes");
    expect(create?.headers["x-api-key"]).toBe(API_KEY);
    expect(create?.headers["content-type"]).toContain("application/json");
    expect(create?.headers["user-agent"]).toMatch(/^e2b-js-sdk\//);
    expect(create?.body).toMatchObject({ templateID: "antler-tmpl", timeout: 91, metadata: { antler_thread: "t1" } });
    expect(plane.live.has("isbx1loop")).toBe(true);
  });

  it("kills with DELETE /sandboxes/{id}, and reports false for an unknown id", async () => {
    const r = remote();
    const sandbox = await r.create({ timeoutMs: 60_000 });

    expect(await sandbox.kill()).toBe(true);
    const del = plane.requests.find((q) => q.method === "DELETE");
    expect(del?.path).toBe(`/sandboxes/${sandbox.sandboxId}`);
    expect(del?.headers["x-api-key"]).toBe(API_KEY);
    expect(plane.live.size).toBe(0);
    expect(await r.kill("isbx-unknown")).toBe(false);
  });

  it("reads sandbox info with GET /sandboxes/{id}", async () => {
    const sandbox = await remote().create({ template: "antler-tmpl", timeoutMs: 60_000 });

    const info = await sandbox.getInfo();

    expect(info).toMatchObject({ sandboxId: sandbox.sandboxId, templateId: "antler-tmpl", state: "running" });
    expect(info.endAt.toISOString()).toBe("2025-01-01T00:30:00.000Z");
  });

  it("reconnects with POST /v2/sandboxes/{id}/connect and the timeout in seconds", async () => {
    const r = remote();
    const sandbox = await r.create({ timeoutMs: 60_000 });

    const again = await r.connect(sandbox.sandboxId, { timeoutMs: 120_000 });

    expect(again.sandboxId).toBe(sandbox.sandboxId);
    const connect = plane.requests.find((q) => q.path.endsWith("/connect"));
    expect(connect?.method).toBe("POST");
    expect(connect?.body).toMatchObject({ timeout: 120 });
    await expect(r.connect("isbx-missing")).rejects.toThrow(/not found/);
  });
});

describe("E2BSandboxProvider over real HTTP", () => {
  function provider(config: Record<string, unknown>) {
    const logs = captureLogs();
    const p = new E2BSandboxProvider({
      config: e2bConfigSchema.parse({ api_url: plane.url, sandbox_url: plane.url, request_timeout_ms: 5000, ...config }),
      baseDir: join(root, "base"),
      logger: logs.logger,
      env: {},
    });
    providers.push(p);
    return p;
  }

  it("raises SANDBOX_UNAVAILABLE with the API's answer when creation is refused", async () => {
    const p = provider({ api_key: "e2b_wrong_key" });

    const err = await p.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);

    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect(String((err as Error).message)).toContain("Invalid API key");
    expect(plane.requests[0]?.headers["x-api-key"]).toBe("e2b_wrong_key");
  });

  it("surfaces a capacity error from the control plane", async () => {
    const p = provider({ api_key: API_KEY });
    plane.failNextCreate(500, { code: 500, error_code: "sandbox_capacity_unavailable", message: "no capacity in region" });

    const err = await p.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);

    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect(String((err as Error).message)).toContain("no capacity in region");
  });

  it("kills the sandbox over HTTP when the bootstrap cannot run, then raises", async () => {
    const p = provider({ api_key: API_KEY, template: "antler-tmpl", timeout_seconds: 300 });
    plane.envdUp = false;

    const err = await p.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);

    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect(String((err as Error).message)).toMatch(/bootstrap/);
    const methods = plane.requests.map((r) => `${r.method} ${r.path}`);
    const create = plane.requests.find((r) => r.method === "POST" && r.path === "/v2/sandboxes");
    expect(create?.body).toMatchObject({ templateID: "antler-tmpl", timeout: 300, metadata: { antler_user: "u1", antler_thread: "t1" } });
    // The bootstrap went to envd (refused here), carrying the sandbox's envd token...
    const envd = plane.requests.find((r) => r.path.startsWith("/process.Process/"));
    expect(envd?.headers["x-access-token"]).toBe(ENVD_TOKEN);
    expect(envd?.headers["e2b-sandbox-id"]).toBe("isbx1loop");
    expect(envd?.headers.authorization).toBe(`Basic ${Buffer.from("root:").toString("base64")}`);
    expect(envd?.headers["connect-timeout-ms"]).toBe("30000");
    expect(String(envd?.body)).toContain(JSON.stringify(BOOTSTRAP_COMMAND));
    // ...and the unusable sandbox was killed afterwards.
    expect(methods.indexOf("DELETE /sandboxes/isbx1loop")).toBeGreaterThan(methods.indexOf(`${envd?.method} ${envd?.path}`));
    expect(plane.live.size).toBe(0);
  });

  it("uploads the thread's uploads into the VM over envd's file API at acquire, and new ones on the next acquire", async () => {
    const p = provider({ api_key: API_KEY });
    const paths = threadPaths(join(root, "base"), "u1", "t1");
    await mkdir(join(paths.uploads, "data"), { recursive: true });
    await writeFile(join(paths.uploads, "report.pdf"), Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff]));
    await writeFile(join(paths.uploads, "data", "table.csv"), "a,b\n1,2\n");

    const sandbox = await p.acquire("t1", { userId: "u1" });

    const vm = plane.files.get("isbx1loop");
    expect(vm?.get("/mnt/user-data/uploads/report.pdf")).toEqual(Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff]));
    expect(vm?.get("/mnt/user-data/uploads/data/table.csv")?.toString()).toBe("a,b\n1,2\n");
    const uploads = plane.requests.filter((r) => r.method === "POST" && r.path === "/files");
    expect(uploads).toHaveLength(2);
    expect(uploads[0]?.headers["x-access-token"]).toBe(ENVD_TOKEN);
    expect(String(uploads[0]?.headers["content-type"])).toMatch(/^multipart\/form-data/);

    // A file uploaded while the sandbox is live reaches it on the next acquire; unchanged ones are not sent again.
    await writeFile(join(paths.uploads, "later.txt"), "arrived later");
    expect(await p.acquire("t1", { userId: "u1" })).toBe(sandbox);
    expect(vm?.get("/mnt/user-data/uploads/later.txt")?.toString()).toBe("arrived later");
    expect(plane.requests.filter((r) => r.method === "POST" && r.path === "/files")).toHaveLength(3);
  });

  it("finds the thread's running sandbox again after a restart, by metadata, instead of creating another", async () => {
    const before = provider({ api_key: API_KEY });
    const first = await before.acquire("t1", { userId: "u1" });
    expect(first.generation).toBe("isbx1loop");
    // Another thread's sandbox is running too; it must not be picked up.
    await before.acquire("t2", { userId: "u1" });
    // The process restarts: the old provider is gone without a release, the VMs keep running.
    providers.splice(providers.indexOf(before), 1);

    const after = provider({ api_key: API_KEY });
    const again = await after.acquire("t1", { userId: "u1" });

    expect(again.id).toBe("e2b:u1/t1");
    expect(again.generation).toBe("isbx1loop");
    expect(plane.requests.filter((r) => r.method === "POST" && r.path === "/v2/sandboxes")).toHaveLength(2);
    const list = plane.requests.filter((r) => r.method === "GET" && r.path === "/v2/sandboxes").pop();
    expect(list?.headers["x-api-key"]).toBe(API_KEY);
    const connect = plane.requests.filter((r) => r.path === "/v2/sandboxes/isbx1loop/connect");
    expect(connect).toHaveLength(1);
    // Re-bootstrapped before use: the last envd command went to the reattached sandbox.
    const lastStart = plane.requests.filter((r) => r.path === "/process.Process/Start").pop();
    expect(lastStart?.headers["e2b-sandbox-id"]).toBe("isbx1loop");
    expect(plane.live).toEqual(new Set(["isbx1loop", "isbx2loop"]));
  });
});
