/**
 * Client–gateway conformance for the skills API (the gateway's own conformance test cannot import this package:
 * it would make a build cycle, gateway -> skills -> gateway). Every `SkillsService` method's answer parses with the
 * response schema of its route, keeping every field, and equals what the route answers over HTTP; the route index
 * (`GET /api`) lists every route.
 */
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import type { z } from "zod";
import skillsPlugin, {
  skillDeleteResponseSchema,
  skillDetailResponseSchema,
  skillInstallResponseSchema,
  skillResponseSchema,
  skillsListResponseSchema,
  skillsOf,
} from "../src/index.js";
import { goodArchive } from "./archives.js";
import { REPORT_SKILL, temp, writePublicSkills } from "./fixtures.js";

function conforms<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const wire = JSON.parse(JSON.stringify(value)) as unknown;
  const parsed = schema.parse(wire);
  expect(parsed).toEqual(wire);
  return parsed;
}

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

describe("skills client–gateway conformance", () => {
  it("listSkills, getSkill, updateSkill, installSkill, removeSkill, reloadSkills match their routes' schemas and answers", async () => {
    const root = temp.tempDir("antler-skills-conf-");
    writePublicSkills(root, { "report-writing": REPORT_SKILL });
    const client = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scriptedModelsPlugin({ m: [{ text: "hi" }] }), skillsPlugin],
      cwd: root,
      env: {},
      discover: false,
    });
    const gateway = await startGateway({
      client,
      config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: "alice-key-0123456789abcdef", user: "alice" }] } },
    });
    closing.push(async () => {
      await gateway.close();
      await client.close();
    });
    const http = async (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set("authorization", "Bearer alice-key-0123456789abcdef");
      const response = await fetch(`${gateway.url}/api${path}`, { ...init, headers });
      return response.json() as Promise<unknown>;
    };
    const skills = skillsOf(client);
    const alice = { userId: "alice" };

    // installSkill (the HTTP twin installs for the same user, so it runs on a copy under another name)
    const installed = conforms(skillInstallResponseSchema, await skills.installSkill(goodArchive(), alice));
    expect(installed.skill.category).toBe("custom");

    // listSkills
    const list = conforms(skillsListResponseSchema, skills.listSkills(alice));
    expect(conforms(skillsListResponseSchema, await http("/skills"))).toEqual(list);
    expect(conforms(skillsListResponseSchema, await http("/skills?enabled_only=true"))).toEqual(
      skills.listSkills({ ...alice, enabledOnly: true }),
    );

    // getSkill
    const detail = conforms(skillDetailResponseSchema, skills.getSkill("tidy-notes", alice));
    expect(conforms(skillDetailResponseSchema, await http("/skills/tidy-notes"))).toEqual(detail);

    // updateSkill
    const disabled = conforms(skillResponseSchema, skills.updateSkill("report-writing", { enabled: false }, alice));
    expect(disabled.enabled).toBe(false);
    const enabled = conforms(
      skillResponseSchema,
      await http("/skills/report-writing", {
        method: "PUT",
        body: JSON.stringify({ enabled: true }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(enabled).toEqual({ ...disabled, enabled: true });

    // reloadSkills
    expect(conforms(skillsListResponseSchema, skills.reloadSkills(alice))).toEqual(
      conforms(skillsListResponseSchema, await http("/skills/reload", { method: "POST" })),
    );

    // removeSkill, then the HTTP install and delete of the same archive
    conforms(skillDeleteResponseSchema, skills.removeSkill("tidy-notes", alice));
    const overHttp = conforms(
      skillInstallResponseSchema,
      await http("/skills/install", { method: "POST", body: goodArchive(), headers: { "content-type": "application/zip" } }),
    );
    expect(overHttp).toEqual(installed);
    expect(conforms(skillDeleteResponseSchema, await http("/skills/custom/tidy-notes", { method: "DELETE" }))).toEqual({
      success: true,
      skill_name: "tidy-notes",
    });

    // The route index shows every skills route, attributed to the plugin.
    const index = (await http("")) as { routes: Array<{ method: string; path: string; plugin: string }> };
    const mine = index.routes.filter((r) => r.plugin === "@antler/plugin-skills").map((r) => `${r.method} ${r.path}`);
    expect(mine.sort()).toEqual(
      [
        "GET /api/skills",
        "POST /api/skills/install",
        "POST /api/skills/reload",
        "GET /api/skills/:name",
        "PUT /api/skills/:name",
        "DELETE /api/skills/custom/:name",
      ].sort(),
    );
  });
});
