// Class services: `provide(token, { useClass })` with tsyringe's decorators from `@antler/kernel/di`, built per
// lifetime by the kernel's tsyringe container (root scope) and its per-run child containers.
import { describe, expect, it } from "vitest";
import { inject, injectable } from "../src/di-decorators.js";
import { type AntlerError, createKernel, createToken, definePlugin } from "../src/index.js";

interface Clock {
  now(): number;
}
const ClockToken = createToken<Clock>("test-classes.clock");
const QuotaToken = createToken<Quota>("test-classes.quota");
const ReportToken = createToken<Report>("test-classes.report");
const LedgerToken = createToken<Ledger>("test-classes.ledger");

let built = 0;
const disposed: number[] = [];

@injectable()
class Quota {
  readonly serial = ++built;
  used = 0;
  constructor(@inject(ClockToken) readonly clock: Clock) {}
  take(): number {
    this.used += 1;
    return this.clock.now();
  }
  async [Symbol.asyncDispose](): Promise<void> {
    disposed.push(this.serial);
  }
}

/** A transient class that injects the run's Quota: each resolve is new, the Quota is the run's. */
@injectable()
class Report {
  constructor(
    @inject(QuotaToken) readonly quota: Quota,
    @inject(ClockToken) readonly clock: Clock,
  ) {}
}

/** A singleton class: built once per kernel, in the root container. */
@injectable()
class Ledger {
  readonly serial = ++built;
  constructor(@inject(ClockToken) readonly clock: Clock) {}
  close(): void {
    disposed.push(-this.serial);
  }
}

const quotaPlugin = definePlugin({
  name: "quota",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.provide(ClockToken, { useValue: { now: () => 7 } });
    ctx.provide(QuotaToken, { useClass: Quota, lifetime: "run" });
    ctx.provide(ReportToken, { useClass: Report, lifetime: "transient" });
    ctx.provide(LedgerToken, { useClass: Ledger });
  },
});

describe("class services (useClass with injectable and inject)", () => {
  it("builds an injectable class per run with its inject(token) parameters resolved, and disposes it when the run ends", async () => {
    const kernel = await createKernel({ plugins: [quotaPlugin], discover: false });
    await kernel.start();
    const seen: Quota[] = [];
    for (let run = 0; run < 2; run++) {
      await kernel.run(async ({ scope }) => {
        const quota = scope.resolve(QuotaToken);
        expect(quota).toBeInstanceOf(Quota);
        expect(quota.take()).toBe(7);
        expect(scope.resolve(QuotaToken)).toBe(quota); // one per run
        const report = scope.resolve(ReportToken);
        expect(report.quota).toBe(quota); // a transient class gets the run's instance
        expect(scope.resolve(ReportToken)).not.toBe(report);
        seen.push(quota);
      });
    }
    expect(seen[0]).not.toBe(seen[1]);
    expect(disposed).toEqual(expect.arrayContaining([seen[0]?.serial, seen[1]?.serial]));
    await kernel.close();
  });

  it("builds a singleton class once per kernel and disposes it when the kernel closes", async () => {
    const a = await createKernel({ plugins: [quotaPlugin], discover: false });
    const b = await createKernel({ plugins: [quotaPlugin], discover: false });
    const ledger = a.scope.resolve(LedgerToken);
    expect(ledger.clock.now()).toBe(7);
    await a.run(async ({ scope }) => expect(scope.resolve(LedgerToken)).toBe(ledger));
    expect(b.scope.resolve(LedgerToken)).not.toBe(ledger);
    await a.close();
    expect(disposed).toContain(-ledger.serial);
    await b.close();
  });

  it("refuses a run-scoped class from the root scope, and a singleton class that injects a run-scoped token", async () => {
    const Needy = createToken<object>("test-classes.needy");
    @injectable()
    class NeedsQuota {
      constructor(@inject(QuotaToken) readonly quota: Quota) {}
    }
    const needy = definePlugin({
      name: "needy",
      version: "1.0.0",
      kernel: "^0.1.0",
      dependsOn: ["quota"],
      setup: (ctx) => ctx.provide(Needy, { useClass: NeedsQuota }),
    });
    const kernel = await createKernel({ plugins: [quotaPlugin, needy], discover: false });
    expect(() => kernel.scope.resolve(QuotaToken)).toThrow(/run-scoped and was resolved outside a run/);
    let err: AntlerError | undefined;
    await kernel.run(async ({ scope }) => {
      try {
        scope.resolve(Needy);
      } catch (e) {
        err = e as AntlerError;
      }
    });
    expect(err?.code).toBe("ANTLER_ERR_DI_UNREGISTERED");
    expect(err?.message).toContain("NeedsQuota");
    expect(err?.hint).toContain("inject(TOKEN)");
    await kernel.close();
  });

  it("names the class and the fix when a constructor parameter has no inject(token)", async () => {
    const Bare = createToken<object>("test-classes.bare");
    class Undecorated {
      constructor(readonly clock: Clock) {}
    }
    const bare = definePlugin({
      name: "bare",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup: (ctx) => ctx.provide(Bare, { useClass: Undecorated }),
    });
    const kernel = await createKernel({ plugins: [bare], discover: false });
    expect(() => kernel.scope.resolve(Bare)).toThrow(/Undecorated/);
    await kernel.close();
  });

  it("refuses a provider with both useClass and useFactory", async () => {
    const Both = createToken<object>("test-classes.both");
    const both = definePlugin({
      name: "both",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup: (ctx) => ctx.provide(Both, { useClass: Ledger, useFactory: () => ({}) }),
    });
    await expect(createKernel({ plugins: [both], discover: false })).rejects.toThrow(/exactly one of useValue, useFactory or useClass/);
  });
});
