// Its own file (vitest runs each file in a fresh module registry): whether tsyringe is loaded is process state.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createKernel, createToken, definePlugin } from "../src/index.js";

const Clock = createToken<{ now(): number }>("lazy.clock");
const Counter = createToken<{ n: number }>("lazy.counter");

const plugin = definePlugin({
  name: "lazy",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.provide(Clock, { useValue: { now: () => 1 } });
    ctx.provide(Counter, { lifetime: "run", useFactory: () => ({ n: 0 }) });
  },
});

const tsyringeLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => /[\\/]tsyringe[\\/]/.test(file));

describe("the DI container loads lazily", () => {
  it("loads tsyringe only when a scope first builds a service: booting a kernel (config check, plugins list) and resolving values never does", async () => {
    const kernel = await createKernel({ plugins: [plugin], discover: false });
    expect(kernel.scope.resolve(Clock).now()).toBe(1);
    expect(tsyringeLoaded()).toBe(false);
    expect(await kernel.run(({ scope }) => scope.resolve(Counter).n)).toBe(0);
    expect(tsyringeLoaded()).toBe(true);
    await kernel.close();
  });
});
