import { AntlerError, MODEL_CALL_PLANNER, type ModelCallPlanner, type PluginContext } from "@antler/kernel";
import { provideRunAdmission } from "./admission.js";
import { type Budget, runtimeConfig } from "./config.js";
import { RuntimeErrorCodes } from "./errors.js";

/**
 * Plans the calls of models with fallbacks, retries, limits or pricing (`@antler/model-kit`, loaded with the first
 * such model), counting requests per minute in Redis when `model_limits.redis_url` is set, in process otherwise.
 */
export function provideModelCallPlanning(ctx: PluginContext): void {
  const limits = runtimeConfig(ctx.kernelConfig).model_limits;
  let planner: Promise<ModelCallPlanner> | undefined;
  let closeStore: (() => Promise<void>) | undefined;
  const open = async (): Promise<ModelCallPlanner> => {
    const kit = await import("@antler/model-kit");
    if (!limits.redis_url) {
      const store = kit.inProcessRateStore();
      return kit.createModelCallPlanner(() => store);
    }
    const { openRedisRateStore } = await import("./stores/redis-rate.js");
    const store = await openRedisRateStore({
      url: limits.redis_url,
      keyPrefix: limits.key_prefix,
      logger: ctx.logger,
      fallback: kit.inProcessRateStore(),
    });
    closeStore = () => store.close();
    return kit.createModelCallPlanner(() => store);
  };
  ctx.provide(MODEL_CALL_PLANNER, {
    useValue: async (model, config, fallbacks, env) => {
      planner ??= open().catch((err: unknown) => {
        planner = undefined; // Redis may be reachable on the next model built
        throw err;
      });
      return (await planner)(model, config, fallbacks, env);
    },
  });
  ctx.hooks.stop.tap(async () => {
    await closeStore?.();
  });
}

/** The start of the UTC day `now` is in, and of the next. */
function utcDay(now: Date): { start: string; next: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { start: start.toISOString(), next: new Date(start.getTime() + 86_400_000) };
}

/** Refuses a run whose user already spent a `budgets:` entry's daily USD (their runs today, as recorded). */
export function provideBudgetAdmission(ctx: PluginContext, now: () => Date = () => new Date()): void {
  const budgets = runtimeConfig(ctx.kernelConfig).budgets;
  if (budgets.length === 0) return;
  provideRunAdmission(ctx, async (request) => {
    if (!request.spentSince || request.internal) return;
    const applying = budgets.filter((b: Budget) => !b.users || b.users.includes(request.userId));
    if (applying.length === 0) return;
    const day = utcDay(now());
    const spent = await request.spentSince(day.start);
    const over = applying.find((b) => spent >= b.usd_per_user_per_day);
    if (!over) return;
    throw new AntlerError(
      RuntimeErrorCodes.BUDGET_EXCEEDED,
      `budget "${over.name}" is spent: user "${request.userId}" ran $${spent.toFixed(4)} of $${over.usd_per_user_per_day} today (UTC)`,
      {
        where: `budgets[${budgets.indexOf(over)}]`,
        hint: `The budget resets at ${day.next.toISOString()}; raise budgets[${budgets.indexOf(over)}].usd_per_user_per_day to allow more.`,
        details: {
          budget: over.name,
          user_id: request.userId,
          spent_usd: spent,
          limit_usd: over.usd_per_user_per_day,
          resets_at: day.next.toISOString(),
        },
      },
    );
  });
}
