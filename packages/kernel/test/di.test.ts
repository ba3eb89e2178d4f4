import { describe, expect, it } from "vitest";
import { type AntlerError, createKernel, createToken, definePlugin, type Scope } from "../src/index.js";

const Clock = createToken<{ now(): number }>("test.clock");
const Session = createToken<{ id: number; closed: boolean; close(): void }>("test.session");
const Missing = createToken<string>("test.missing");

function services(log: string[] = []) {
  let sessions = 0;
  return definePlugin({
    name: "services",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.provide(Clock, { useValue: { now: () => 42 } });
      ctx.provide(Session, {
        lifetime: "run",
        useFactory: () => {
          const s = {
            id: ++sessions,
            closed: false,
            close() {
              s.closed = true;
              log.push(`closed ${s.id}`);
            },
          };
          return s;
        },
      });
    },
  });
}

describe("DI scopes", () => {
  it("resolves explicit tokens from the root scope", async () => {
    const kernel = await createKernel({ plugins: [services()], discover: false });
    expect(kernel.scope.resolve(Clock).now()).toBe(42);
    expect(kernel.scope.has(Missing)).toBe(false);
    expect(kernel.scope.tryResolve(Missing)).toBeUndefined();
  });

  it("names the token and every registered token with its plugin when a token is unregistered", async () => {
    const kernel = await createKernel({ plugins: [services()], discover: false });
    let err: AntlerError | undefined;
    try {
      kernel.scope.resolve(Missing);
    } catch (e) {
      err = e as AntlerError;
    }
    expect(err?.code).toBe("ANTLER_ERR_DI_UNREGISTERED");
    expect(err?.message).toContain('"test.missing"');
    expect(err?.message).toContain('"test.clock" (services)');
    expect(err?.message).toContain('"test.session" (services)');
  });

  it("lets a plugin resolve a dependency's tokens in setup, and every plugin's tokens from the start hook on", async () => {
    const seen: string[] = [];
    const Later = createToken<string>("test.later");
    const consumer = definePlugin({
      name: "consumer",
      version: "1.0.0",
      kernel: "^0.1.0",
      dependsOn: ["services"],
      setup(ctx) {
        seen.push(`setup clock ${ctx.services.resolve(Clock).now()}`);
        // Bound by a plugin that sets up after this one: not yet, with a hint that says when.
        try {
          ctx.services.resolve(Later);
        } catch (e) {
          seen.push(`setup later: ${(e as AntlerError).code} ${(e as AntlerError).hint?.includes("hooks.start")}`);
        }
        ctx.hooks.start.tap(() => {
          seen.push(`start later ${ctx.services.resolve(Later)}`);
        });
      },
    });
    const late = definePlugin({
      name: "late",
      version: "1.0.0",
      kernel: "^0.1.0",
      dependsOn: ["consumer"],
      setup: (ctx) => ctx.provide(Later, { useValue: "bound" }),
    });
    const kernel = await createKernel({ plugins: [late, consumer, services()], discover: false });
    await kernel.start();
    expect(seen).toEqual(["setup clock 42", "setup later: ANTLER_ERR_DI_UNREGISTERED true", "start later bound"]);
    await kernel.close();
  });

  it("gives each run its own instance of a run-scoped service and disposes it when the run succeeds", async () => {
    const log: string[] = [];
    const kernel = await createKernel({ plugins: [services(log)], discover: false });
    const ids = await Promise.all([1, 2].map(() => kernel.run(({ scope }) => scope.resolve(Session).id)));
    expect(new Set(ids).size).toBe(2);
    expect(log.sort()).toEqual(["closed 1", "closed 2"]);
  });

  it("shares one run-scoped instance within a run", async () => {
    const kernel = await createKernel({ plugins: [services()], discover: false });
    const [first, second] = await kernel.run(({ scope }) => [scope.resolve(Session), scope.resolve(Session)]);
    expect(second).toBe(first);
  });

  it("disposes the run scope when the run throws", async () => {
    const log: string[] = [];
    const kernel = await createKernel({ plugins: [services(log)], discover: false });
    await expect(
      kernel.run(({ scope }) => {
        scope.resolve(Session);
        throw new Error("tool exploded");
      }),
    ).rejects.toThrow("tool exploded");
    expect(log).toEqual(["closed 1"]);
  });

  it("disposes the run scope at once when the run is cancelled, and rejects with RUN_CANCELLED", async () => {
    const log: string[] = [];
    const kernel = await createKernel({ plugins: [services(log)], discover: false });
    const controller = new AbortController();
    let leaked: Scope | undefined;
    const running = kernel.run(
      async ({ scope, signal }) => {
        leaked = scope;
        scope.resolve(Session);
        queueMicrotask(() => controller.abort("user pressed stop"));
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
        await new Promise(() => {}); // a run that ignores its signal still ends for the caller
      },
      { signal: controller.signal },
    );
    await expect(running).rejects.toMatchObject({ code: "ANTLER_ERR_RUN_CANCELLED" });
    expect(log).toEqual(["closed 1"]);
    expect(() => leaked?.resolve(Session)).toThrow(/disposed/);
  });

  it("refuses to resolve a run-scoped token from the root scope", async () => {
    const kernel = await createKernel({ plugins: [services()], discover: false });
    expect(() => kernel.scope.resolve(Session)).toThrow(/run-scoped/);
  });

  it("rejects two providers for one token, naming the first owner", async () => {
    const again = definePlugin({
      name: "again",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup: (ctx) => ctx.provide(Clock, { useValue: { now: () => 1 } }),
    });
    await expect(createKernel({ plugins: [services(), again], discover: false })).rejects.toThrow(/already provided by services/);
  });

  it("keeps each kernel's services to itself: one plugin in two kernels builds two singletons", async () => {
    const Counter = createToken<{ n: number }>("test.counter");
    const counter = definePlugin({
      name: "counter",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup: (ctx) => ctx.provide(Counter, { useFactory: () => ({ n: 0 }) }),
    });
    const a = await createKernel({ plugins: [counter], discover: false });
    const b = await createKernel({ plugins: [counter], discover: false });
    const c = await createKernel({ plugins: [], discover: false });
    a.scope.resolve(Counter).n += 1;
    expect(a.scope.resolve(Counter).n).toBe(1);
    expect(b.scope.resolve(Counter).n).toBe(0);
    expect(c.scope.has(Counter)).toBe(false);
  });

  it("disposes factory-built singletons when the kernel closes", async () => {
    let closed = 0;
    const Pool = createToken<{ close(): void }>("test.pool");
    const p = definePlugin({
      name: "pool",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup: (ctx) => ctx.provide(Pool, { useFactory: () => ({ close: () => void closed++ }) }),
    });
    const kernel = await createKernel({ plugins: [p], discover: false });
    expect(kernel.scope.resolve(Pool)).toBe(kernel.scope.resolve(Pool));
    await kernel.close();
    expect(closed).toBe(1);
  });
});
