// Two copies of @antler/kernel in one process (a plugin that brought its own): the second copy is the built
// dist/ copied into another folder, loaded from there by Node, as a nested install would be.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AntlerError, createToken, type Kernel, kernelCopies } from "../src/index.js";
import { createTestKernel } from "../src/testing/index.js";

const KERNEL_DIR = resolve(import.meta.dirname, "..");
const DIST = join(KERNEL_DIR, "dist");
type KernelModule = typeof import("../src/index.js");

function errorOf(fn: () => unknown): AntlerError {
  try {
    fn();
  } catch (e) {
    return e as AntlerError;
  }
  throw new Error("expected an error");
}

describe.skipIf(!existsSync(join(DIST, "index.js")))("tokens across two copies of @antler/kernel (needs a built dist/)", () => {
  let copyDir: string;
  let copy: KernelModule;
  let kernel: Kernel;

  beforeAll(async () => {
    // Inside the kernel's node_modules, so the copy resolves zod and LangChain like a nested install.
    const cache = join(KERNEL_DIR, "node_modules", ".cache");
    mkdirSync(cache, { recursive: true });
    copyDir = mkdtempSync(join(cache, "kernel-copy-"));
    cpSync(DIST, join(copyDir, "dist"), { recursive: true });
    writeFileSync(join(copyDir, "package.json"), JSON.stringify({ name: "@antler/kernel", version: "0.1.0", type: "module" }));
    copy = (await import(pathToFileURL(join(copyDir, "dist", "bundle", "index.js")).href)) as KernelModule;
    const Clock = copy.createToken<number>("test.copies.clock");
    kernel = await createTestKernel({
      plugins: [
        copy.definePlugin({
          name: "clock-from-copy",
          version: "1.0.0",
          kernel: "^0.1.0",
          setup: (ctx) => ctx.provide(Clock, { useValue: 42 }),
        }),
      ],
    });
  });

  afterAll(async () => {
    await kernel?.close();
    // The registry of copies is process-wide: forget the one this test made up.
    (globalThis as Record<symbol, Set<string> | undefined>)[Symbol.for("antler.kernel.copies")]?.delete(`${copyDir}${sep}`);
    rmSync(copyDir, { recursive: true, force: true });
  });

  it("agree on a token by its name, so a service one copy provides resolves with the other's token", () => {
    expect(copy.createToken("test.copies.clock").key).toBe(createToken("test.copies.clock").key);
    expect(kernel.scope.resolve(createToken<number>("test.copies.clock"))).toBe(42);
  });

  it("are both listed, and a missing token's error says two copies are loaded and where", () => {
    expect(kernelCopies()).toEqual(expect.arrayContaining([`${KERNEL_DIR}${sep}`, `${copyDir}${sep}`]));
    const error = errorOf(() => kernel.scope.resolve(createToken("test.copies.missing")));
    expect(error.code).toBe("ANTLER_ERR_DI_UNREGISTERED");
    expect(error.message).toContain("2 copies of @antler/kernel are loaded");
    expect(error.message).toContain(`${KERNEL_DIR}${sep}`);
    expect(error.message).toContain(`${copyDir}${sep}`);
    expect(error.hint).toMatch(/peerDependency/);
  });

  it("say so when a token of the same name is registered but is a different object (a kernel without the name registry)", () => {
    const stale = Object.freeze({ key: Symbol("test.copies.clock"), name: "test.copies.clock" });
    const error = errorOf(() => kernel.scope.resolve(stale));
    expect(error.message).toContain('A different token object named "test.copies.clock" is registered by clock-from-copy');
  });
});
