// kill -9 at the process boundary: a real `antler serve` (compiled CLI, SQLite, an OpenAI-compatible model on
// loopback) takes an encrypted, signed Feishu message event, journals and acknowledges it, and dies (SIGKILL) while
// the run is in the model. A second `antler serve` on the same data sends the answer card exactly once.
import { type AntlerServe, startAntlerServe } from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CrashFixture, crashTestBuilt, providerDist, startCrashFixture, until } from "../../channels/test/crash-fixture.js";
import { APP_ID, APP_SECRET, callbackRequest, FakeFeishu, messageEvent, readCard } from "./open-api-server.js";

const dist = providerDist("channel-feishu");
const TOKEN = "crash-test-verification-token";
const ENCRYPT_KEY = "crash-test-encrypt-key";

describe.skipIf(!crashTestBuilt(dist))("Feishu under `antler serve`, killed with SIGKILL mid-answer (needs a build first)", () => {
  let fs: FakeFeishu;
  let fixture: CrashFixture;
  let serve: AntlerServe | undefined;

  beforeAll(async () => {
    fs = await new FakeFeishu().start();
    fixture = await startCrashFixture({
      provider: "feishu",
      dist,
      providerConfig: [
        `app_id: ${APP_ID}`,
        "app_secret: $FEISHU_APP_SECRET",
        "verification_token: $FEISHU_VERIFICATION_TOKEN",
        "encrypt_key: $FEISHU_ENCRYPT_KEY",
        `domain: ${fs.url}`,
      ],
    });
  }, 90_000);

  afterAll(async () => {
    if (serve && serve.child.exitCode === null) serve.child.kill("SIGKILL");
    await fixture?.close();
    await fs?.close();
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
    const code = await fixture.connectCode(env());
    expect(code).toBeTruthy();

    serve = await startAntlerServe({ cwd: fixture.dir, env: env() });
    expect((await say(serve.url, `/connect ${code}`)).status).toBe(200);
    await until("the connect reply", () => bodies().some((b) => b.includes("Connected")));

    const ack = await say(serve.url, "survive the crash");
    expect(ack.status).toBe(200); // acknowledged: Feishu would not send it again
    await until("the run to reach the model", () => fixture.modelCalls() >= 1);
    serve.child.kill("SIGKILL");
    await new Promise((done) => serve?.child.once("exit", done));
    expect(bodies().some((b) => b.includes("Recovered answer"))).toBe(false);

    serve = await startAntlerServe({ cwd: fixture.dir, env: env() });
    await until("the recovered answer", () => bodies().some((b) => b.includes("Recovered answer to:")), 90_000);
    // Stop the second process: after it exits nothing more can be sent, so the counts below are final.
    await serve.stop();
    const answers = bodies().filter((b) => b.includes("Recovered answer to:"));
    expect(answers).toHaveLength(1);
    expect(answers[0]).toContain("survive the crash");
    expect(fixture.modelCalls()).toBe(2);
  }, 180_000);
});
