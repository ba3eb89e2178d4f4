// kill -9 at the process boundary: a real `antler serve` (compiled CLI, SQLite, an OpenAI-compatible model on
// loopback) takes an encrypted, signed Feishu message event, journals and acknowledges it, and dies (SIGKILL) while
// the run is in the model. A second `antler serve` on the same data sends the answer card exactly once.
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
import { APP_ID, APP_SECRET, callbackRequest, FakeFeishu, messageEvent, readCard } from "./open-api-server.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  feishu: resolve(here, "../dist/index.js"),
  channels: resolve(here, "../../channels/dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const TOKEN = "crash-test-verification-token";
const ENCRYPT_KEY = "crash-test-encrypt-key";
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

describe.skipIf(!built)("Feishu under `antler serve`, killed with SIGKILL mid-answer (needs a build first)", () => {
  let dir: string;
  let fs: FakeFeishu;
  let model: OpenAICompatibleServer;
  let serve: AntlerServe | undefined;
  let modelCalls = 0;

  beforeAll(async () => {
    fs = await new FakeFeishu().start();
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
    dir = mkdtempSync(join(tmpdir(), "antler-feishu-crash-"));
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
        `  - path: ${JSON.stringify(dists.feishu)}`,
        "    config:",
        `      app_id: ${APP_ID}`,
        "      app_secret: $FEISHU_APP_SECRET",
        "      verification_token: $FEISHU_VERIFICATION_TOKEN",
        "      encrypt_key: $FEISHU_ENCRYPT_KEY",
        `      domain: ${fs.url}`,
        "",
      ].join("\n"),
    );
  }, 90_000);

  afterAll(async () => {
    if (serve && serve.child.exitCode === null) serve.child.kill("SIGKILL");
    await model?.close();
    await fs?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({ FEISHU_APP_SECRET: APP_SECRET, FEISHU_VERIFICATION_TOKEN: TOKEN, FEISHU_ENCRYPT_KEY: ENCRYPT_KEY });
  const say = (url: string, text: string) =>
    fetch(
      callbackRequest(
        `${url}/channels/feishu/webhook`,
        messageEvent(TOKEN, { chatId: "oc_crash", chatType: "p2p", openId: "ou_ada", text }),
        {
          encryptKey: ENCRYPT_KEY,
        },
      ),
    );
  const bodies = () => fs.chat("oc_crash").map((m) => readCard(m.content).text);

  it("binds with `antler channels connect`, then answers an acknowledged event exactly once after kill -9 and a restart", async () => {
    const connect = await run(
      process.execPath,
      [antlerBinPath(), "channels", "connect", "feishu", "--user", "alice", "--config", "config.yaml"],
      {
        cwd: dir,
        env: { ...process.env, ANTLER_CONFIG: "", ...env() },
      },
    );
    const code = /\/connect (\S+)/.exec(connect.stdout)?.[1];
    expect(code).toBeTruthy();

    serve = await startAntlerServe({ cwd: dir, env: env() });
    expect((await say(serve.url, `/connect ${code}`)).status).toBe(200);
    await until("the connect reply", () => bodies().some((b) => b.includes("Connected")));

    const ack = await say(serve.url, "survive the crash");
    expect(ack.status).toBe(200); // acknowledged: Feishu would not send it again
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
