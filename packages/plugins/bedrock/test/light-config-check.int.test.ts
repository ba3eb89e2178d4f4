import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { useTempDirs } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const { tempDir } = useTempDirs();
const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const SDKS = ["@aws-sdk/client-bedrock-runtime", "@langchain/aws"];

/**
 * Boots a kernel with the built plugin's light entry (`./plugin`, what config loading imports) and a bedrock entry
 * in a fresh Node process whose module hook logs every specifier resolved; with `build`, then builds the model.
 * Returns the SDKs among what was resolved.
 */
async function sdksLoaded(build: boolean): Promise<string[]> {
  const dir = tempDir();
  const log = join(dir, "resolved.log");
  writeFileSync(
    join(dir, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  appendFileSync(${JSON.stringify(log)}, specifier + "\\n");
  return next(specifier, context);
}`,
  );
  writeFileSync(
    join(dir, "register.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});`,
  );
  writeFileSync(
    join(dir, "main.mjs"),
    `const { createKernel, silentLogger } = await import(${JSON.stringify(pathToFileURL(join(packageDir, "node_modules/@antler/kernel/dist/index.js")).href)});
const plugin = (await import(${JSON.stringify(pathToFileURL(join(packageDir, "dist/plugin.js")).href)})).default;
const kernel = await createKernel({
  plugins: [plugin],
  config: { models: [{ name: "b", provider: "bedrock", model: "anthropic.claude-3-5-haiku-20241022-v1:0", options: { region: "us-east-1" } }] },
  discover: false,
  env: {},
  logger: silentLogger(),
});
${build ? 'await kernel.createModel("b");' : ""}
await kernel.close();`,
  );
  await run(process.execPath, ["--import", pathToFileURL(join(dir, "register.mjs")).href, join(dir, "main.mjs")], {
    cwd: packageDir,
    timeout: 60_000,
  });
  const resolved = readFileSync(log, "utf8").split("\n");
  return SDKS.filter((sdk) => resolved.some((s) => s === sdk || s.startsWith(`${sdk}/`)));
}

describe("the bedrock plugin's config check", () => {
  it("boots a kernel (antler config check's work) without loading the AWS SDK or @langchain/aws", async () => {
    expect(await sdksLoaded(false)).toEqual([]);
  }, 90_000);

  it("loads them with the first model built (so the check above can see them)", async () => {
    expect(await sdksLoaded(true)).toEqual(SDKS);
  }, 90_000);
});
