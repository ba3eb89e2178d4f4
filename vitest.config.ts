import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Tests import workspace packages from their TypeScript sources through the "antler:source" export condition (a name of our own: some dependencies ship a "source" condition that points at TypeScript),
// so `vitest` never runs against a stale dist/.
// Legacy (TypeScript `experimentalDecorators`) decorators, as tsyringe's `injectable` and `inject` need: the test of
// class services uses them. Parameter types are not emitted (Antler never relies on them).
const shared = {
  resolve: { conditions: ["antler:source"] },
  ssr: { resolve: { conditions: ["antler:source"] } },
  oxc: { decorator: { legacy: true } },
};

// Test files in real Chromium: they watch the page's responsiveness and paint, so they run one at a time, after the
// rest (a project with one worker is Vitest's sequential group), never next to a CPU-heavy file.
const inBrowser = [
  "packages/plugins/console/test/**/*.int.test.ts",
  "packages/plugins/protocols/test/pages-*.int.test.ts",
  "packages/community-tools/browser/test/**/*.int.test.ts",
];

// Most integration tests wait on child processes, servers and databases rather than compute, so two files at a time
// keep even a 2-core machine busy (Vitest's default, cores - 1, would run one file at a time there).
const workers = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  ...shared,
  test: {
    projects: [
      {
        ...shared,
        test: {
          name: "unit",
          include: ["packages/**/test/**/*.test.ts", "examples/**/test/**/*.test.ts", "scripts/test/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**", "**/dist/**"],
          testTimeout: 20_000,
          maxWorkers: workers,
        },
      },
      {
        ...shared,
        test: {
          name: "int",
          include: ["packages/**/test/**/*.int.test.ts", "examples/**/test/**/*.int.test.ts", "scripts/test/**/*.int.test.ts"],
          exclude: ["**/node_modules/**", "**/dist/**", ...inBrowser],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          maxWorkers: workers,
        },
      },
      {
        ...shared,
        test: {
          name: "int-browser",
          include: inBrowser,
          exclude: ["**/node_modules/**", "**/dist/**"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
