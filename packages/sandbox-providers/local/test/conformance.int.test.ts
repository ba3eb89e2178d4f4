import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSandboxConformance } from "@antler/kernel/testing";
import { LocalSandboxProvider } from "../src/index.js";

let baseDir: string | undefined;

runSandboxConformance({
  name: "local",
  create: async () => {
    baseDir = await mkdtemp(join(tmpdir(), "antler-local-conformance-"));
    return { provider: new LocalSandboxProvider({ baseDir }), threadId: "conformance-thread", userId: "alice" };
  },
  close: async () => {
    if (baseDir) await rm(baseDir, { recursive: true, force: true });
    baseDir = undefined;
  },
});
