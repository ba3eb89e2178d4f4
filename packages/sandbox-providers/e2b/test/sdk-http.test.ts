import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAntlerError } from "@antler/kernel";
import { captureLogs } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BOOTSTRAP_COMMAND, createSdkRemote, E2BSandboxProvider, e2bConfigSchema } from "../src/index.js";

/**
 * A loopback stand-in for the E2B control plane (api.e2b.app): the routes the SDK calls for create, connect,
 * getInfo and kill, answered with the shapes of E2B's OpenAPI schema. The in-sandbox API (envd, Connect RPC)
 * is not emulated: any request to it is recorded and refused.
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
  let created = 0;
  let nextCreateFailure: { status: number; body: unknown } | null = null;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
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
        return json(201, sandboxJson(id, templateID));
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

    const err = await p.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);

    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect(String((err as Error).message)).toMatch(/bootstrap/);
    const methods = plane.requests.map((r) => `${r.method} ${r.path}`);
    const create = plane.requests.find((r) => r.path === "/v2/sandboxes");
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
});
