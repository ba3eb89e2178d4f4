import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestKernel, runPluginConformance } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import localSandbox, { LocalSandboxProvider } from "../src/index.js";

runPluginConformance(localSandbox, {
  validConfig: { max_sandboxes: 8, shell: "/bin/bash" },
  invalidConfigs: [{ max_sandboxes: 0 }, { max_sandboxes: 1.5 }, { shell: 42 }],
});

describe("@antler/sandbox-local in a kernel", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "antler-local-plugin-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("registers provider local, rooted at the kernel's base_dir", async () => {
    const kernel = await createTestKernel({ plugins: [{ plugin: localSandbox, config: {} }], cwd: dir, config: { base_dir: "data" } });
    try {
      const provider = kernel.sandboxProvider();
      expect(provider).toBeInstanceOf(LocalSandboxProvider);
      expect(provider.isolated).toBe(false);
      const sandbox = await provider.acquire("t", { userId: "default" });
      await sandbox.writeFile("/mnt/user-data/outputs/hello.txt", "hi");
      expect(await readFile(join(dir, "data", "users", "default", "threads", "t", "user-data", "outputs", "hello.txt"), "utf8")).toBe("hi");
    } finally {
      await kernel.close();
    }
  });

  it("warns at setup when allow_host_bash is on", async () => {
    const kernel = await createTestKernel({
      plugins: [{ plugin: localSandbox, config: {} }],
      cwd: dir,
      config: { sandbox: { provider: "local", allow_host_bash: true } },
      start: false,
    });
    try {
      expect(kernel.logs.some((l) => l.level === "warn" && String(l.msg).includes("allow_host_bash"))).toBe(true);
    } finally {
      await kernel.close();
    }
  });
});
