// Long polling under `antler channels run` (the compiled CLI in a child process): the command deletes the webhook,
// takes updates with getUpdates, answers them, and stops cleanly on SIGTERM.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  antlerBinPath,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeTelegram, textUpdate } from "./bot-api-server.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  telegram: resolve(here, "../dist/index.js"),
  channels: resolve(here, "../../channels/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();

describe.skipIf(!built)("`antler channels run` with Telegram long polling (needs a build first)", () => {
  let dir: string;
  let tg: FakeTelegram;
  let model: OpenAICompatibleServer;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    tg = await new FakeTelegram().start();
    model = await startOpenAICompatibleServer({
      handler: () => ({ text: "Polled answer." }),
    });
    dir = mkdtempSync(join(tmpdir(), "antler-telegram-poll-"));
    writeFileSync(
      join(dir, "config.yaml"),
      [
        ...loopbackModelConfig(model.url),
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        `  - path: ${JSON.stringify(dists.channels)}`,
        "    config:",
        "      default_user: alice",
        `  - path: ${JSON.stringify(dists.telegram)}`,
        "    config:",
        "      token: $TELEGRAM_BOT_TOKEN",
        "      mode: polling",
        "      poll_timeout_seconds: 1",
        `      api_root: ${tg.url}`,
        "",
      ].join("\n"),
    );
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await model?.close();
    await tg?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers an update taken by getUpdates, then exits 0 on SIGTERM", async () => {
    child = spawn(process.execPath, [antlerBinPath(), "channels", "run", "--config", "config.yaml"], {
      cwd: dir,
      env: { ...process.env, ANTLER_CONFIG: "", TELEGRAM_BOT_TOKEN: tg.token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (c) => {
      output += c;
    });
    child.stderr?.on("data", (c) => {
      output += c;
    });
    const exited = new Promise<number | null>((done) => child?.once("exit", (code) => done(code)));
    tg.queueUpdate(textUpdate(tg, { text: "hello by polling" }));
    for (let i = 0; i < 1200 && !tg.chat(42).some((m) => m.text === "Polled answer."); i++) await sleep(50);
    expect(tg.chat(42).map((m) => m.text)).toContain("Polled answer.");
    expect(tg.callsOf("deleteWebhook").length).toBeGreaterThanOrEqual(1);
    expect(output).toContain("channels receiving: telegram");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 120_000);
});
