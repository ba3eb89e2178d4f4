import { AntlerError, ErrorCodes } from "../errors.js";
import type { DefaultSlotName, MiddlewareEntry, MiddlewareStage } from "./types.js";

export { DEFAULT_CHAIN } from "./types.js";
export type BuiltinMiddlewareName = DefaultSlotName;

const TERMINAL = "Clarification";
// `early` middleware sits after error handling, so its failures are handled like a tool's or a model's.
const EARLY_AFTER: readonly string[] = ["ThreadData", "Uploads", "DanglingToolCall", "LLMErrorHandling", "ToolErrorHandling"];
const STAGE_RANK: Record<MiddlewareStage, number> = { first: 0, early: 1, normal: 2, late: 3 };

function invalid(message: string, where: string, hint?: string): AntlerError {
  return new AntlerError(ErrorCodes.PIPELINE_INVALID, message, { where, hint });
}

/**
 * Orders the middleware chain: built-ins in their default order, then plugin entries placed by `replace`,
 * by stage, and by `before`/`after` anchors (which may point at other plugin entries). Deterministic: ties
 * keep the order the entries were contributed in (plugin load order).
 */
export function composeChain(builtins: readonly MiddlewareEntry[], contributed: readonly MiddlewareEntry[]): MiddlewareEntry[] {
  const chain: MiddlewareEntry[] = [...builtins];
  const aliases = new Map<string, string>(); // replaced name → the entry that now stands in its place
  const find = (name: string) => {
    const actual = aliases.get(name) ?? name;
    return chain.findIndex((e) => e.name === actual);
  };
  const names = new Set(chain.map((e) => e.name));
  for (const entry of contributed) {
    if (names.has(entry.name)) {
      throw invalid(`middleware "${entry.name}" is contributed twice`, entry.plugin, "Give each middleware of a plugin a distinct name.");
    }
    names.add(entry.name);
    const p = entry.placement;
    const modes = [p.replace !== undefined, p.before !== undefined || p.after !== undefined, p.stage !== undefined].filter(Boolean).length;
    if (modes > 1 || (p.before !== undefined && p.after !== undefined)) {
      throw invalid(
        `middleware "${entry.name}" gives more than one placement`,
        entry.plugin,
        "Use exactly one of replace, before, after or stage.",
      );
    }
    if (p.replace !== undefined && p.override !== true) {
      throw invalid(
        `middleware "${entry.name}" would replace "${p.replace}" without override: true`,
        entry.plugin,
        "Replacement must be explicit: add `override: true`.",
      );
    }
    if (p.after === TERMINAL) {
      throw invalid(
        `middleware "${entry.name}" cannot be placed after ${TERMINAL}`,
        entry.plugin,
        `${TERMINAL} always ends the chain; use before: "${TERMINAL}".`,
      );
    }
  }

  // 1. Replacements take the replaced entry's position.
  for (const entry of contributed.filter((e) => e.placement.replace !== undefined)) {
    const target = entry.placement.replace as string;
    if (aliases.has(target)) {
      throw invalid(`middleware "${target}" is replaced twice (by "${aliases.get(target)}" and "${entry.name}")`, entry.plugin);
    }
    const index = find(target);
    if (index < 0)
      throw invalid(
        `cannot replace "${target}": no such middleware in the chain`,
        entry.plugin,
        `Known: ${chain.map((e) => e.name).join(", ")}.`,
      );
    chain[index] = entry;
    aliases.set(target, entry.name);
  }

  // 2. Stages, in stage order then contribution order.
  const staged = contributed
    .map((entry, order) => ({ entry, order }))
    .filter(
      ({ entry }) => entry.placement.replace === undefined && entry.placement.before === undefined && entry.placement.after === undefined,
    )
    .sort((a, b) => STAGE_RANK[a.entry.placement.stage ?? "normal"] - STAGE_RANK[b.entry.placement.stage ?? "normal"] || a.order - b.order);
  let firstCount = 0;
  for (const { entry } of staged) {
    const stage = entry.placement.stage ?? "normal";
    if (stage === "first") {
      chain.splice(firstCount++, 0, entry);
    } else if (stage === "early") {
      let at = firstCount;
      for (const name of EARLY_AFTER) at = Math.max(at, find(name) + 1);
      while (chain[at]?.placement.stage === "early") at++; // after the `early` entries placed so far
      chain.splice(at, 0, entry);
    } else {
      const terminal = find(TERMINAL);
      chain.splice(terminal < 0 ? chain.length : terminal, 0, entry);
    }
  }

  // 3. Anchors, possibly on each other: place whatever has its anchor, until nothing is left.
  let pending = contributed.filter((e) => e.placement.before !== undefined || e.placement.after !== undefined);
  while (pending.length > 0) {
    const next: MiddlewareEntry[] = [];
    for (const entry of pending) {
      const anchor = (entry.placement.before ?? entry.placement.after) as string;
      const index = find(anchor);
      if (index < 0) {
        next.push(entry);
        continue;
      }
      chain.splice(entry.placement.before !== undefined ? index : index + 1, 0, entry);
    }
    if (next.length === pending.length) {
      const bad = next[0] as MiddlewareEntry;
      const anchor = (bad.placement.before ?? bad.placement.after) as string;
      throw invalid(
        `middleware "${bad.name}" is anchored to "${anchor}", which is not in the chain`,
        bad.plugin,
        `Known: ${chain.map((e) => e.name).join(", ")}.`,
      );
    }
    pending = next;
  }

  assertChainOrder(chain);
  return chain;
}

/** The ordering invariants, checked whenever an agent is built: the terminal middleware is last, and every `requires` is met. */
export function assertChainOrder(chain: readonly MiddlewareEntry[]): void {
  const problems: string[] = [];
  const terminal = chain.findIndex((e) => e.name === TERMINAL || e.placement.replace === TERMINAL);
  if (terminal >= 0 && terminal !== chain.length - 1) {
    problems.push(
      `${chain[terminal]?.name} must be last, but ${chain
        .slice(terminal + 1)
        .map((e) => e.name)
        .join(", ")} come after it`,
    );
  }
  const position = new Map<string, number>();
  chain.forEach((e, i) => {
    position.set(e.name, i);
    if (e.placement.replace) position.set(e.placement.replace, i);
  });
  chain.forEach((e, i) => {
    for (const required of e.spec.requires ?? []) {
      const at = position.get(required);
      if (at !== undefined && at > i) problems.push(`${e.name} requires ${required} to come before it`);
    }
  });
  if (problems.length > 0) {
    throw new AntlerError(ErrorCodes.PIPELINE_ORDER, `middleware order is invalid: ${problems.join("; ")}`, {
      hint: "Adjust the placement (before/after/stage) of the middleware named.",
      details: { order: chain.map((e) => e.name), problems },
    });
  }
}
