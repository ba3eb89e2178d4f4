// kill -9 at the process boundary: a real `antler serve` (compiled CLI, SQLite, an OpenAI-compatible model on
// loopback) takes a signed GitHub issue_comment delivery, journals and acknowledges it, and dies (SIGKILL) while
// the run is in the model. A second `antler serve` on the same data posts the answer comment exactly once.
import { type AntlerServe, startAntlerServe } from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CrashFixture, crashTestBuilt, providerDist, startCrashFixture, until } from "../../channels/test/crash-fixture.js";
import { BOT_LOGIN, commentDelivery, type Delivery, deliveryRequest, FakeGitHub } from "./github-api-server.js";

const dist = providerDist("channel-github");
const SECRET = "crash-test-webhook-secret";
const ADA = { login: "ada", id: 42 };

describe.skipIf(!crashTestBuilt(dist))("GitHub under `antler serve`, killed with SIGKILL mid-answer (needs a build first)", () => {
  let gh: FakeGitHub;
  let fixture: CrashFixture;
  let serve: AntlerServe | undefined;

  beforeAll(async () => {
    gh = await new FakeGitHub().start();
    fixture = await startCrashFixture({
      provider: "github",
      dist,
      providerConfig: [
        "token: $GITHUB_TOKEN",
        "webhook_secret: $GITHUB_WEBHOOK_SECRET",
        `bot_login: ${BOT_LOGIN}`,
        `api_url: ${gh.url}`,
        "edit_interval_ms: 250",
      ],
    });
  }, 90_000);

  afterAll(async () => {
    if (serve && serve.child.exitCode === null) serve.child.kill("SIGKILL");
    await fixture?.close();
    await gh?.close();
  });

  const env = () => ({ GITHUB_TOKEN: gh.token, GITHUB_WEBHOOK_SECRET: SECRET });
  const post = (url: string, delivery: Delivery) => fetch(deliveryRequest(`${url}/channels/github/webhook`, delivery));
  const comment = (body: string) => commentDelivery(SECRET, { issue: 7, user: ADA, body: `@${BOT_LOGIN} ${body}` });
  const bodies = () => gh.issueComments("octo", "demo", 7).map((c) => c.body);

  it("binds with `antler channels connect`, then answers an acknowledged delivery exactly once after kill -9 and a restart", async () => {
    const code = await fixture.connectCode(env());
    expect(code).toBeTruthy();

    serve = await startAntlerServe({ cwd: fixture.dir, env: env() });
    expect((await post(serve.url, comment(`/connect ${code}`))).status).toBe(202);
    await until("the connect reply", () => bodies().some((b) => b.includes("Connected")));

    const ack = await post(serve.url, comment("survive the crash"));
    expect(ack.status).toBe(202); // acknowledged: GitHub would not deliver it again
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
