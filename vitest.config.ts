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
        },
      },
      {
        ...shared,
        test: {
          name: "int",
          include: ["packages/**/test/**/*.int.test.ts", "examples/**/test/**/*.int.test.ts", "scripts/test/**/*.int.test.ts"],
          exclude: ["**/node_modules/**", "**/dist/**"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
