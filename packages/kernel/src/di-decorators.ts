// `@antler/kernel/di`: the decorators for class services (`provide(token, { useClass })`). tsyringe needs the
// Reflect metadata API, so reflect-metadata loads first; importing this entry loads both.
import "reflect-metadata";
import { injectable, inject as tsyringeInject } from "tsyringe";
import type { Token } from "./di.js";

export { injectable };

/** Marks a constructor parameter as resolved from `token` in the scope that builds the class. */
export function inject(token: Token<unknown>): ParameterDecorator {
  return tsyringeInject(token.key) as ParameterDecorator;
}
