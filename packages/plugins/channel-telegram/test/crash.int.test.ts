// kill -9 at the process boundary: a real `antler serve` (compiled CLI, SQLite, an OpenAI-compatible model on
// loopback) takes a Telegram update by webhook, journals and acknowledges it, and dies (SIGKILL) while the run is
// in the model. A second `antler serve` on the same data answers the update exactly once.
import { type AntlerServe, startAntlerServe } from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CrashFixture, crashTestBuilt, providerDist, startCrashFixture, until } from "../../channels/test/crash-fixture.js";
import { FakeTelegram, textUpdate } from "./bot-api-server.js";

const dist = providerDist("channel-telegram");
const SECRET = "crash-test-secret-0123456789";

describe.skipIf(!crashTestBuilt(dist))("Telegram under `antler serve`, killed with SIGKILL mid-answer (needs a build first)", () => {
  let tg: FakeTelegram;
  let fixture: CrashFixture;
  let serve: AntlerServe | undefined;

  beforeAll(async () => {
    tg = await new FakeTelegram().start();
    fixture = await startCrashFixture({
      provider: "telegram",
      dist,
      providerConfig: ["token: $TELEGRAM_BOT_TOKEN", "mode: webhook", "webhook_secret: $TELEGRAM_WEBHOOK_SECRET", `api_root: ${tg.url}`],
    });
  }, 90_000);

  afterAll(async () => {
    if (serve && serve.child.exitCode === null) serve.child.kill("SIGKILL");
    await fixture?.close();
    await tg?.close();
  });

  const env = () => ({ TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_WEBHOOK_SECRET: SECRET });
  const post = (url: string, update: unknown) =>
    fetch(`${url}/channels/telegram/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
      body: JSON.stringify(update),
    });

  it("binds with `antler channels connect`, then answers an acknowledged update exactly once after kill -9 and a restart", async () => {
    const code = await fixture.connectCode(env());
    expect(code).toBeTruthy();

    serve = await startAntlerServe({ cwd: fixture.dir, env: env() });
    expect((await post(serve.url, textUpdate(tg, { text: `/connect ${code}` }))).status).toBe(200);
    await until("the connect reply", () => tg.chat(42).some((m) => m.text?.includes("Connected")));

    const update = textUpdate(tg, { text: "survive the crash" });
    const ack = await post(serve.url, update);
    expect(ack.status).toBe(200); // acknowledged: Telegram would not send it again
    await until("the run to reach the model", () => fixture.modelCalls() >= 1);
    serve.child.kill("SIGKILL");
    await new Promise((done) => serve?.child.once("exit", done));
    expect(tg.chat(42).some((m) => m.text?.includes("Recovered answer"))).toBe(false);

    serve = await startAntlerServe({ cwd: fixture.dir, env: env() });
    await until("the recovered answer", () => tg.chat(42).some((m) => m.text?.includes("Recovered answer to:")), 90_000);
    // Stop the second process: after it exits nothing more can be sent, so the counts below are final.
    await serve.stop();
    const answers = tg.chat(42).filter((m) => m.text?.includes("Recovered answer to:"));
    expect(answers).toHaveLength(1);
    expect(answers[0]?.text).toContain("survive the crash");
    expect(fixture.modelCalls()).toBe(2);
  }, 180_000);
});
