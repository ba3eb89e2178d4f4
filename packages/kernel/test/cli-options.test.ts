import { describe, expect, expectTypeOf, it } from "vitest";
import { createKernel, definePlugin } from "../src/index.js";
import { runKernelCommand } from "../src/testing/index.js";

// The checks a declared command gets before `run`, through runKernelCommand (the CLI's own path, in process);
// the process-boundary tests are in cli-declared-options.int.test.ts.

async function kernelWithCommands() {
  const seen: unknown[] = [];
  const plugin = definePlugin({
    name: "jobs",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.commands.add({
        name: "jobs add",
        summary: "Add a job.",
        options: {
          queue: { required: true, choices: ["fast", "slow"] },
          weight: { type: "number", default: 1 },
          force: { type: "boolean" },
        },
        run(_args, io) {
          expectTypeOf(io.options.queue).toEqualTypeOf<string>();
          expectTypeOf(io.options.weight).toEqualTypeOf<number>();
          expectTypeOf(io.options.force).toEqualTypeOf<boolean | undefined>();
          seen.push(io.options);
          return 0;
        },
      });
      ctx.commands.add({ name: "jobs clear", summary: "Clear the jobs.", options: {}, run: () => 0 });
    },
  });
  const kernel = await createKernel({ plugins: [plugin], discover: false, builtins: false });
  return { kernel, seen };
}

describe("declared command options, checked before run", () => {
  it.each([
    { argv: ["jobs", "add"], message: "--queue is required (one of: fast, slow)" },
    { argv: ["jobs", "add", "--queue", "fast", "--weight", "heavy"], message: '--weight must be a number, got "heavy"' },
    { argv: ["jobs", "add", "--queue", "fast", "--force=yes"], message: "Option '--force' does not take an argument" },
    { argv: ["jobs", "add", "--queue"], message: "Option '--queue <value>' argument missing" },
    { argv: ["jobs", "clear", "--all"], message: "unknown option --all. Allowed: --config <path> (-c), --verbose (-v)" },
    { argv: ["jobs", "clear", "everything"], message: 'unexpected argument "everything": takes no arguments' },
  ])("$argv exits 2: $message", async ({ argv, message }) => {
    const { kernel, seen } = await kernelWithCommands();
    try {
      const { code, stdout, stderr } = await runKernelCommand(kernel, argv);
      expect({ code, stdout, seen }).toEqual({ code: 2, stdout: "", seen: [] });
      expect(stderr.split("\n")[0]).toBe(`antler ${argv.slice(0, 2).join(" ")}: ${message}`);
    } finally {
      await kernel.close();
    }
  });

  it("a number option takes a decimal, and a default fills an option not given", async () => {
    const { kernel, seen } = await kernelWithCommands();
    try {
      expect((await runKernelCommand(kernel, ["jobs", "add", "--queue", "slow", "--weight", "0.5"])).code).toBe(0);
      expect((await runKernelCommand(kernel, ["jobs", "add", "--force", "--queue", "fast"])).code).toBe(0);
      expect(seen).toEqual([
        { queue: "slow", weight: 0.5, force: undefined },
        { queue: "fast", weight: 1, force: true },
      ]);
    } finally {
      await kernel.close();
    }
  });
});
