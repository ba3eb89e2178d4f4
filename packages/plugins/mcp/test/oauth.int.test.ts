import type { ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Kernel } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import mcpPlugin, { MCP_TOOLS } from "../src/index.js";
import { type RecordingProxy, removeTempDirs, startEverythingHttp, startRecordingProxy, stopProcess, tempDir } from "./fixtures.js";

interface TokenEndpoint {
  readonly url: string;
  readonly bodies: URLSearchParams[];
  /** Tokens the MCP proxy accepts: only the newest one issued. */
  current: string | null;
  expiresIn: number;
  reject: boolean;
  server: Server;
}

async function startTokenEndpoint(): Promise<TokenEndpoint> {
  const endpoint = { bodies: [] as URLSearchParams[], current: null as string | null, expiresIn: 3600, reject: false } as TokenEndpoint;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += String(c);
    });
    req.on("end", () => {
      const body = new URLSearchParams(raw);
      endpoint.bodies.push(body);
      if (endpoint.reject) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"invalid_client","error_description":"bad secret"}');
        return;
      }
      const n = endpoint.bodies.length;
      endpoint.current = `access-${n}-${"x".repeat(12)}`;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          access_token: endpoint.current,
          token_type: "Bearer",
          expires_in: endpoint.expiresIn,
          refresh_token: `rotated-${n}`,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(endpoint, { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token` });
}

let everything: { url: string; child: ChildProcess };
let tokens: TokenEndpoint;
let proxy: RecordingProxy;
const kernels: Kernel[] = [];

beforeAll(async () => {
  everything = await startEverythingHttp();
  tokens = await startTokenEndpoint();
  proxy = await startRecordingProxy(everything.url, () => (tokens.current ? [tokens.current] : []));
});

afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
  tokens.bodies.length = 0;
  tokens.current = null;
  tokens.expiresIn = 3600;
  tokens.reject = false;
  proxy.requests.length = 0;
  removeTempDirs();
});

afterAll(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => {
    tokens.server.closeAllConnections();
    tokens.server.close(() => resolve());
  });
  await stopProcess(everything.child);
});

async function kernelWith(server: Record<string, unknown>) {
  const config = { servers: { remote: { transport: "http", url: `${proxy.origin}/mcp`, ...server } } };
  const kernel = await createTestKernel({ plugins: [{ plugin: mcpPlugin, config }], cwd: tempDir(), builtins: false });
  kernels.push(kernel);
  return { kernel, catalog: kernel.scope.resolve(MCP_TOOLS) };
}

const context = { thread_id: "t1", user_id: "u1" };

async function echo(kernel: Kernel, message: string): Promise<unknown> {
  const tool = (await kernel.assembleTools({ context })).find((e) => e.tool.name === "remote_echo")?.tool;
  if (!tool) throw new Error("remote_echo was not listed");
  return tool.invoke({ message }, { context });
}

describe("OAuth for HTTP MCP servers", () => {
  it("without oauth the protected server answers 401 and is reported as failed", async () => {
    const { kernel, catalog } = await kernelWith({ init_timeout_seconds: 5 });
    expect((await kernel.assembleTools({ context })).length).toBe(0);
    expect(catalog.status().servers[0]?.state).toBe("failed");
    expect(proxy.requests.length).toBeGreaterThan(0);
  });

  it("client_credentials: one token request up front, every MCP request sends the bearer token", async () => {
    const oauth = { grant: "client_credentials", token_url: tokens.url, client_id: "antler", client_secret: "s3cret", scope: "mcp:tools" };
    const { kernel } = await kernelWith({ oauth });
    expect(await echo(kernel, "a")).toBe("Echo: a");
    expect(await echo(kernel, "b")).toBe("Echo: b");
    expect(tokens.bodies.map((b) => Object.fromEntries(b))).toEqual([
      { grant_type: "client_credentials", client_id: "antler", client_secret: "s3cret", scope: "mcp:tools" },
    ]);
    expect(proxy.requests.length).toBeGreaterThanOrEqual(4);
    for (const r of proxy.requests) expect(r.headers.authorization).toBe(`Bearer ${tokens.current}`);
  });

  it("refresh_token: refreshes shortly before expires_in runs out, using the rotated refresh token", async () => {
    // A 4 s token is refreshed 0.4 s (a tenth of its lifetime) before it runs out, so each echo below has 3.6 s
    // to finish on one token even on a loaded machine.
    tokens.expiresIn = 4;
    const oauth = { grant: "refresh_token", token_url: tokens.url, client_id: "antler", refresh_token: "initial-refresh" };
    const { kernel } = await kernelWith({ oauth });
    expect(await echo(kernel, "first")).toBe("Echo: first");
    expect(tokens.bodies).toHaveLength(1);
    // Past the refresh point of the first token (it was requested before the first echo ended).
    await new Promise((r) => setTimeout(r, 3_700));
    // The old token is no longer accepted by the proxy once a new one is issued: the call only works with the new one.
    expect(await echo(kernel, "second")).toBe("Echo: second");
    expect(tokens.bodies.map((b) => [b.get("grant_type"), b.get("refresh_token")])).toEqual([
      ["refresh_token", "initial-refresh"],
      ["refresh_token", "rotated-1"],
    ]);
    expect(proxy.requests.at(-1)?.headers.authorization).toBe("Bearer access-2-xxxxxxxxxxxx");
  });

  it("a rejected client is reported with the OAuth error and without the secret", async () => {
    tokens.reject = true;
    const oauth = { grant: "client_credentials", token_url: tokens.url, client_id: "antler", client_secret: "do-not-show-me" };
    const { kernel, catalog } = await kernelWith({ oauth });
    expect((await kernel.assembleTools({ context })).length).toBe(0);
    const status = catalog.status().servers[0];
    expect(status?.state).toBe("failed");
    expect(status?.lastError).toMatch(/OAuth token request for MCP server remote .*HTTP 401 invalid_client: bad secret/);
    expect(status?.lastError).not.toContain("do-not-show-me");
    expect(proxy.requests).toHaveLength(0);
  });
});
