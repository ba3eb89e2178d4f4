// The channels' allowlists with Slack ids: workspaces are Slack teams (`slack:T...`), users and channels Slack ids.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SlackHarness, startHarness } from "./harness.js";
import { messageEvent, TEAM } from "./slack-api-server.js";

let h: SlackHarness;

beforeAll(async () => {
  h = await startHarness({ channels: { default_user: "guest", allow: { workspaces: [`slack:${TEAM}`], users: ["slack:U0ALLOWED"] } } });
});

afterAll(async () => {
  await h?.close();
});

async function send(channel: string, user: string, team = TEAM) {
  const event = messageEvent(h.slack, { channel, user, text: "anyone there?" });
  const payload = { ...event.payload, team_id: team, event: { ...(event.payload.event as object), team } };
  expect((await h.post(h.slack.eventRequest(payload))).status).toBe(200);
  await h.idle();
  return (await h.host.store.event("slack", `${channel}:${event.ts}`))?.status;
}

describe("slack allowlists", () => {
  it("answers an allowed user in the allowed workspace, and ignores other users and other workspaces", async () => {
    expect(await send("D0ALLOW001", "U0ALLOWED")).toBe("answered");
    expect(h.slack.channel("D0ALLOW001").at(-1)?.text).toBe("You said: anyone there?");
    expect(await send("D0ALLOW002", "U0STRANGER")).toBe("ignored");
    expect(await send("D0ALLOW003", "U0ALLOWED", "T0OTHER01")).toBe("ignored");
    expect(h.slack.channel("D0ALLOW002")).toEqual([]);
    expect(h.slack.channel("D0ALLOW003")).toEqual([]);
  });
});
