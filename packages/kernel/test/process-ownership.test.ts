import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";

describe("no process ownership", () => {
  it("importing the kernel and running a kernel lifecycle installs no signal handlers and never exits", async () => {
    const signals = ["SIGINT", "SIGTERM", "SIGHUP", "uncaughtException", "unhandledRejection", "beforeExit", "exit"] as const;
    const before = signals.map((s) => process.listenerCount(s));
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    vi.resetModules();
    const kernelModule = await import("../src/index.js");
    await import("../src/testing/index.js");
    const kernel = await kernelModule.createKernel({ discover: false });
    await kernel.start();
    await kernel.run(() => 1);
    await kernel.close();
    expect(signals.map((s) => process.listenerCount(s))).toEqual(before);
    expect(exit).not.toHaveBeenCalled();
    exit.mockRestore();
  });

  it("keeps KERNEL_VERSION in step with package.json", async () => {
    const { KERNEL_VERSION } = await import("../src/index.js");
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(KERNEL_VERSION).toBe(pkg.version);
  });
});
