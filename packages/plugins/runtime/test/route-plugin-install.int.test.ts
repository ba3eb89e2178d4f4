// A plugin that contributes HTTP routes, written in a project outside the workspace that installs only what such a
// plugin needs: the packed kernel and runtime (with the packages the runtime's default preset brings: the cassette
// and SQLite plugins, model-kit, storage-kit), and neither the gateway nor the MCP plugin. Its route, typed against
// `@antler/plugin-runtime/routes`, type-checks with tsc, and the kernel loads the compiled plugin from config.yaml
// with its routes contributed. The steps share one project (see npm-install.int.test.ts in the kernel for the install).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeUnless } from "@antler/kernel/testing";
import { afterAll, expect, it } from "vitest";
import {
  installWorkspaceSqliteBinding,
  killRunning,
  packedInstallSkipReason,
  packWorkspacePackages,
  REPO_ROOT,
  runAsUser,
  transpilePlugin,
} from "../../../kernel/test/install-helpers.js";

const PACKED = [
  "packages/kernel",
  "packages/plugins/runtime",
  // What the runtime depends on; npm would otherwise look for them on the registry.
  "packages/plugins/cassette",
  "packages/plugins/storage-sqlite",
  "packages/model-kit",
  "packages/storage-kit",
];
const STEP_TIMEOUT_MS = 180_000;

const PLUGIN_SOURCE = `import { definePlugin } from "@antler/kernel";
import { defineGatewayRoute, gatewayErrorReply, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { z } from "zod";

export default definePlugin({
  name: "acme-notes",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    const notes = new Map<string, string>();
    provideGatewayRoutes(ctx, {
      routes: [
        defineGatewayRoute({
          method: "PUT",
          path: "/notes/:id",
          summary: "Save a note",
          body: z.object({ text: z.string().min(1) }),
          handler({ userId, params, body }) {
            const text: string = body.text;
            // @ts-expect-error body is typed from the body schema, so text is not a number (fails if the types were any)
            const notANumber: number = body.text;
            void notANumber;
            notes.set(\`\${userId}/\${params.id}\`, text);
            return { status: 201, body: { id: params.id, text } };
          },
        }),
        defineGatewayRoute({
          method: "GET",
          path: "/notes/:id",
          handler({ userId, params }) {
            const text = notes.get(\`\${userId}/\${params.id}\`);
            if (text === undefined) return gatewayErrorReply(404, { code: "ACME_NOTE_NOT_FOUND", message: \`no note \${params.id}\` });
            return { body: { id: params.id, text } };
          },
        }),
      ],
    });
  },
});
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: true,
    types: ["node"],
  },
  include: ["src"],
};

const CONFIG_YAML = `base_dir: .antler
logging:
  level: warn
storage:
  backend: memory
plugins:
  - path: ./build/plugin.js
`;

// Boots the kernel from config.yaml and calls the contributed routes' handlers the way the gateway would.
const LOAD_SOURCE = `import { AntlerClient } from "@antler/plugin-runtime";
import { gatewayRoutesToken } from "@antler/plugin-runtime/routes";

const client = await AntlerClient.create({ configPath: "config.yaml" });
try {
  const contribution = client.kernel.scope.resolve(gatewayRoutesToken("acme-notes"));
  const request = (body) => ({ userId: "alice", params: { id: "n1" }, query: {}, body, client });
  const route = (method) => contribution.routes.find((r) => r.method === method);
  const missing = await route("GET").handler(request());
  const saved = await route("PUT").handler(request(route("PUT").body.parse({ text: "buy milk" })));
  const read = await route("GET").handler(request());
  const plugins = client.kernel.plugins.map((p) => p.name);
  process.stdout.write(JSON.stringify({ plugins, routes: contribution.routes.map((r) => r.method + " " + r.path), missing, saved, read }) + "\\n");
} finally {
  await client.close();
}
`;

describeUnless(
  "a route plugin in a project that installs the packed kernel and runtime, without the gateway or MCP",
  await packedInstallSkipReason(PACKED),
  () => {
    const root = mkdtempSync(join(tmpdir(), "antler-route-plugin-"));
    const packs = join(root, "packs");
    const projectDir = join(root, "project");
    const state: { tarballs: Record<string, string>; installed?: boolean; compiled?: boolean } = { tarballs: {} };

    afterAll(() => {
      killRunning();
      rmSync(root, { recursive: true, force: true });
    });

    it(
      "installs the tarballs with npm, and neither the gateway, the MCP plugin nor hono comes along",
      async () => {
        mkdirSync(packs);
        state.tarballs = await packWorkspacePackages(PACKED, packs);
        mkdirSync(projectDir);
        const pinned = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> })
          .devDependencies;
        const manifest = {
          name: "acme-notes",
          private: true,
          type: "module",
          dependencies: Object.fromEntries(Object.entries(state.tarballs).map(([name, file]) => [name, `file:../packs/${file}`])),
          devDependencies: { typescript: pinned.typescript, "@types/node": pinned["@types/node"] },
        };
        writeFileSync(join(projectDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
        const install = await runAsUser(
          "npm",
          ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
          { cwd: projectDir, timeoutMs: STEP_TIMEOUT_MS - 20_000 },
        );
        expect(install.code, install.output).toBe(0);
        expect(existsSync(join(projectDir, "node_modules/@antler/plugin-runtime/dist/routes.js"))).toBe(true);
        for (const absent of ["@antler/plugin-gateway", "@antler/plugin-mcp", "hono", "@modelcontextprotocol/sdk"]) {
          expect(existsSync(join(projectDir, "node_modules", absent)), `${absent} is installed`).toBe(false);
        }
        installWorkspaceSqliteBinding(projectDir);
        state.installed = true;
      },
      STEP_TIMEOUT_MS,
    );

    it(
      "type-checks the plugin's routes against the published @antler/plugin-runtime/routes, and a misuse fails the check",
      async () => {
        expect(state.installed, "the install step failed").toBe(true);
        mkdirSync(join(projectDir, "src"));
        writeFileSync(join(projectDir, "src/plugin.ts"), PLUGIN_SOURCE);
        writeFileSync(join(projectDir, "tsconfig.json"), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
        const tsc = join(projectDir, "node_modules/typescript/bin/tsc");
        const check = await runAsUser(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], { cwd: projectDir, timeoutMs: 120_000 });
        expect(check.code, check.output).toBe(0);

        writeFileSync(
          join(projectDir, "src/broken.ts"),
          `import { defineGatewayRoute } from "@antler/plugin-runtime/routes";\nexport const r = defineGatewayRoute({ method: "FETCH", path: "/x", handler: () => ({}) });\n`,
        );
        const broken = await runAsUser(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], { cwd: projectDir, timeoutMs: 120_000 });
        rmSync(join(projectDir, "src/broken.ts"));
        expect(broken.code).not.toBe(0);
        expect(broken.output).toMatch(/src\/broken\.ts\(2,\d+\): error TS\d+/);

        const transpile = await transpilePlugin(projectDir);
        expect(transpile.code, transpile.output).toBe(0);
        state.compiled = true;
      },
      STEP_TIMEOUT_MS,
    );

    it(
      "loads the compiled plugin from config.yaml with its routes contributed, and they answer",
      async () => {
        expect(state.compiled, "the type-check step failed").toBe(true);
        writeFileSync(join(projectDir, "config.yaml"), CONFIG_YAML);
        writeFileSync(join(projectDir, "load.mjs"), LOAD_SOURCE);
        const load = await runAsUser(process.execPath, ["load.mjs"], { cwd: projectDir, timeoutMs: 120_000 });
        expect(load.code, load.output).toBe(0);
        const printed = JSON.parse(load.output.trim().split("\n").at(-1) as string) as Record<string, unknown>;
        expect(printed.plugins).toEqual(expect.arrayContaining(["acme-notes", "@antler/plugin-runtime"]));
        expect(printed.routes).toEqual(["PUT /notes/:id", "GET /notes/:id"]);
        expect(printed.missing).toEqual({ status: 404, body: { error: { code: "ACME_NOTE_NOT_FOUND", message: "no note n1" } } });
        expect(printed.saved).toEqual({ status: 201, body: { id: "n1", text: "buy milk" } });
        expect(printed.read).toEqual({ body: { id: "n1", text: "buy milk" } });
      },
      STEP_TIMEOUT_MS,
    );
  },
);
