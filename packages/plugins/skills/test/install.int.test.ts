/**
 * The archive table at the two boundaries a user reaches: `antler skills install` in a real process, and
 * `POST /api/skills/install` on a real gateway on loopback. Every bad archive is refused with its reason and
 * leaves every folder exactly as it was (the whole temp root is compared, so nothing lands outside it either).
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import skillsPlugin, { skillInstallResponseSchema, skillsListResponseSchema } from "../src/index.js";
import { badArchives, goodArchive, skillMd, TEST_LIMITS } from "./archives.js";
import { temp, writePublicSkills } from "./fixtures.js";
import { snapshotTree } from "./tree.js";

const here = dirname(fileURLToPath(import.meta.url));
const ANTLER = join(here, "..", "..", "..", "kernel", "bin", "antler.js");
const DIST = join(here, "..", "dist", "index.js");

beforeAll(() => {
  for (const file of [DIST, join(here, "..", "..", "..", "kernel", "dist", "cli", "main.js")]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: build first (npx tsc -b packages/plugins/skills)`);
  }
});

function antler(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ANTLER, ...args], { cwd, env: { PATH: process.env.PATH }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += String(d);
    });
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A distribution folder: config.yaml loading the built plugin, with small install limits, and one public skill. */
function distribution() {
  const root = temp.tempDir("antler-skills-int-");
  const app = join(root, "app");
  writePublicSkills(app, { "report-writing": skillMd("report-writing") });
  const limits = Object.entries(TEST_LIMITS)
    .map(([k, v]) => `    ${k}: ${v}`)
    .join("\n");
  writeFileSync(
    join(app, "config.yaml"),
    ["storage: { backend: memory }", "skills:", "  install:", limits, "plugins:", `  - path: ${JSON.stringify(DIST)}`, ""].join("\n"),
  );
  return { root, app, config: join(app, "config.yaml") };
}

describe("antler skills install (a real process)", () => {
  it("installs a good archive for --user, and `skills list` shows it to that user only", async () => {
    const { app, config } = distribution();
    const file = join(app, "tidy-notes.skill");
    writeFileSync(file, goodArchive());
    const installed = await antler(["skills", "install", "tidy-notes.skill", "--user", "alice", "--config", config], app);
    expect(installed.stderr).toBe("");
    expect(installed.stdout).toContain('Installed skill "tidy-notes" at /mnt/skills/custom/tidy-notes/SKILL.md');
    expect(installed.code).toBe(0);
    const alice = await antler(["skills", "list", "--user", "alice", "--json", "--config", config], app);
    const list = skillsListResponseSchema.parse(JSON.parse(alice.stdout));
    expect(list.skills.map((s) => `${s.category}/${s.name}`)).toEqual(
      ["public/report-writing", "custom/tidy-notes"].sort((a, b) => a.split("/")[1]!.localeCompare(b.split("/")[1]!)),
    );
    const bob = await antler(["skills", "show", "tidy-notes", "--user", "bob", "--config", config], app);
    expect(bob.code).toBe(1);
    expect(bob.stderr).toContain('no skill named "tidy-notes"');
  });

  it("refuses every archive of the table with its reason, exit code 1, and writes nothing anywhere", async () => {
    const { root, app, config } = distribution();
    const table = badArchives();
    expect(table.length).toBeGreaterThanOrEqual(12);
    for (const [i, archive] of table.entries()) writeFileSync(join(app, `bad-${i}.skill`), archive.bytes);
    const before = snapshotTree(root);
    for (const [i, archive] of table.entries()) {
      const result = await antler(["skills", "install", `bad-${i}.skill`, "--user", "alice", "--config", config], app);
      expect({ case: archive.case, code: result.code }).toEqual({ case: archive.case, code: 1 });
      expect(result.stderr, archive.case).toMatch(archive.message);
      expect(result.stderr, archive.case).toContain("Nothing was installed");
      expect(result.stdout, archive.case).toBe("");
    }
    expect(snapshotTree(root)).toEqual(before);
  }, 300_000);
});

describe("POST /api/skills/install (a real gateway on loopback)", () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function serve() {
    const root = temp.tempDir("antler-skills-http-");
    const app = join(root, "app");
    writePublicSkills(app, { "report-writing": skillMd("report-writing") });
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "memory" },
        title: { enabled: false },
        skills: { install: TEST_LIMITS },
      } as never,
      plugins: [scriptedModelsPlugin({ m: [{ text: "hi" }] }), skillsPlugin],
      cwd: app,
      env: {},
      discover: false,
    });
    const gateway = await startGateway({
      client,
      config: {
        port: 0,
        auth: {
          mode: "api_keys",
          api_keys: [
            { key: "alice-key-0123456789abcdef", user: "alice" },
            { key: "bob-key-0123456789abcdef01", user: "bob" },
          ],
        },
      },
      shutdownGraceMs: 500,
    });
    closing.push(async () => {
      await gateway.close();
      await client.close();
    });
    const call = (path: string, init: RequestInit & { user?: "alice" | "bob" } = {}) => {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${init.user === "bob" ? "bob-key-0123456789abcdef01" : "alice-key-0123456789abcdef"}`);
      return fetch(`${gateway.url}/api${path}`, { ...init, headers });
    };
    return { root, call };
  }

  it("installs a raw application/zip body and a multipart upload; another user gets 404 for it", async () => {
    const { call } = await serve();
    const raw = await call("/skills/install", { method: "POST", body: goodArchive(), headers: { "content-type": "application/zip" } });
    expect(raw.status).toBe(201);
    expect(skillInstallResponseSchema.parse(await raw.json()).skill.location).toBe("/mnt/skills/custom/tidy-notes/SKILL.md");
    expect((await call("/skills/tidy-notes")).status).toBe(200);
    const hidden = await call("/skills/tidy-notes", { user: "bob" });
    expect(hidden.status).toBe(404);
    expect(((await hidden.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_SKILL_NOT_FOUND");
    expect((await call("/skills/custom/tidy-notes", { method: "DELETE", user: "bob" })).status).toBe(404);
    expect(
      (
        await call("/skills/tidy-notes", {
          method: "PUT",
          user: "bob",
          body: JSON.stringify({ enabled: false }),
          headers: { "content-type": "application/json" },
        })
      ).status,
    ).toBe(404);

    const form = new FormData();
    form.append("file", new Blob([goodArchive()]), "tidy-notes.skill");
    const again = await call("/skills/install", { method: "POST", body: form, user: "bob" });
    expect(again.status).toBe(201);
  });

  it("refuses every archive of the table with 400, a coded error, and writes nothing", async () => {
    const { root, call } = await serve();
    const before = snapshotTree(root);
    for (const archive of badArchives()) {
      const response = await call("/skills/install", {
        method: "POST",
        body: archive.bytes,
        headers: { "content-type": "application/zip" },
      });
      const body = (await response.json()) as { error: { code: string; message: string; hint?: string } };
      expect({ case: archive.case, status: response.status }).toEqual({ case: archive.case, status: 400 });
      expect(body.error.code, archive.case).toBe("ANTLER_ERR_SKILL_ARCHIVE_REFUSED");
      expect(body.error.message, archive.case).toMatch(archive.message);
      expect(body.error.hint, archive.case).toContain("Nothing was installed");
    }
    expect(snapshotTree(root)).toEqual(before);
  });

  it("answers 413 to an upload over max_archive_bytes without reading it all", async () => {
    const { root, call } = await serve();
    const before = snapshotTree(root);
    const response = await call("/skills/install", {
      method: "POST",
      body: new Uint8Array(TEST_LIMITS.max_archive_bytes + 1),
      headers: { "content-type": "application/zip" },
    });
    expect(response.status).toBe(413);
    expect(snapshotTree(root)).toEqual(before);
  });
});
