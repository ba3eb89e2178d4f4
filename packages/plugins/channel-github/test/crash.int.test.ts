// kill -9 at the process boundary: a real `antler serve` (compiled CLI, SQLite, an OpenAI-compatible model on
// loopback) takes a signed GitHub issue_comment delivery, journals and acknowledges it, and dies (SIGKILL) while
// the run is in the model. A second `antler serve` on the same data posts the answer comment exactly once.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  type AntlerServe,
  antlerBinPath,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startAntlerServe,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOT_LOGIN, commentDelivery, type Delivery, deliveryRequest, FakeGitHub } from "./github-api-server.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  github: resolve(here, "../dist/index.js"),
  channels: resolve(here, "../../channels/dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const SECRET = "crash-test-webhook-secret";
const ADA = { login: "ada", id: 42 };
const run = promisify(execFile);

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe.skipIf(!built)("GitHub under `antler serve`, killed with SIGKILL mid-answer (needs a build first)", () => {
  let dir: string;
  let gh: FakeGitHub;
  let model: OpenAICompatibleServer;
  let serve: AntlerServe | undefined;
  let modelCalls = 0;

  beforeAll(async () => {
    gh = await new FakeGitHub().start();
    model = await startOpenAICompatibleServer({
      handler: (body) => {
        modelCalls += 1;
        const last = body.messages.at(-1);
        const text = typeof last?.content === "string" ? last.content : "";
        // The first process never gets its answer: it is killed while it waits here.
        if (modelCalls === 1) return { text: "never delivered", delayMs: 120_000 };
        return { text: `Recovered answer to: ${text.slice(-20)}` };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-github-crash-"));
    writeFileSync(
      join(dir, "config.yaml"),
      [
        ...loopbackModelConfig(model.url),
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        `  - path: ${JSON.stringify(dists.gateway)}`,
        "    config:",
        "      auth:",
        "        api_keys:",
        "          - { key: alice-key-0123456789abcdef, user: alice }",
        `  - path: ${JSON.stringify(dists.channels)}`,
        "    config:",
        "      lease_seconds: 2",
        "      recovery_interval_seconds: 0.5",
        `  - path: ${JSON.stringify(dists.github)}`,
        "    config:",
        "      token: $GITHUB_TOKEN",
        "      webhook_secret: $GITHUB_WEBHOOK_SECRET",
        `      bot_login: ${BOT_LOGIN}`,
        `      api_url: ${gh.url}`,
        "      edit_interval_ms: 250",
        "",
      ].join("\n"),
    );
  }, 90_000);

  afterAll(async () => {
    if (serve && serve.child.exitCode === null) serve.child.kill("SIGKILL");
    await model?.close();
    await gh?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({ GITHUB_TOKEN: gh.token, GITHUB_WEBHOOK_SECRET: SECRET });
  const post = (url: string, delivery: Delivery) => fetch(deliveryRequest(`${url}/channels/github/webhook`, delivery));
  const comment = (body: string) => commentDelivery(SECRET, { issue: 7, user: ADA, body: `@${BOT_LOGIN} ${body}` });
  const bodies = () => gh.issueComments("octo", "demo", 7).map((c) => c.body);

  it("binds with `antler channels connect`, then answers an acknowledged delivery exactly once after kill -9 and a restart", async () => {
    const connect = await run(
      process.execPath,
      [antlerBinPath(), "channels", "connect", "github", "--user", "alice", "--config", "config.yaml"],
      {
        cwd: dir,
        env: { ...process.env, ANTLER_CONFIG: "", ...env() },
      },
    );
    const code = /\/connect (\S+)/.exec(connect.stdout)?.[1];
    expect(code).toBeTruthy();

    serve = await startAntlerServe({ cwd: dir, env: env() });
    expect((await post(serve.url, comment(`/connect ${code}`))).status).toBe(202);
    await until("the connect reply", () => bodies().some((b) => b.includes("Connected")));

    const ack = await post(serve.url, comment("survive the crash"));
    expect(ack.status).toBe(202); // acknowledged: GitHub would not deliver it again
    await until("the run to reach the model", () => modelCalls >= 1);
    serve.child.kill("SIGKILL");
    await new Promise((done) => serve?.child.once("exit", done));
    expect(bodies().some((b) => b.includes("Recovered answer"))).toBe(false);

    serve = await startAntlerServe({ cwd: dir, env: env() });
    await until("the recovered answer", () => bodies().some((b) => b.includes("Recovered answer to:")), 90_000);
    // Stop the second process: after it exits nothing more can be sent, so the counts below are final.
    await serve.stop();
    const answers = bodies().filter((b) => b.includes("Recovered answer to:"));
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain("survive the crash");
    expect(modelCalls).toBe(2);
  }, 180_000);
});
