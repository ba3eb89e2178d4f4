import type { StateField } from "@antler/kernel";
import { ReducedValue } from "@langchain/langgraph";
import type { ReactAgent } from "langchain";

/**
 * Whether LangChain's per-call state initialization can change anything for this state: true when some field
 * is required or has a default. LangChain's `ReactAgent.invoke`/`stream` run that initialization on every call
 * of an agent with middleware: it reads the thread's whole checkpoint (`getState`), rebuilds a zod schema of
 * every middleware field and parses the old values with it, then feeds the old values back in as input. With
 * only optional, default-free fields the result is the input it started from, so the call can go straight to
 * the compiled graph (which already carries the agent's default config).
 */
export function stateNeedsInitialization(fields: Readonly<Record<string, StateField>>): boolean {
  for (const field of Object.values(fields)) {
    const schema = ReducedValue.isInstance(field) ? (field.inputSchema ?? field.valueSchema) : field;
    const parse = (schema as { safeParse?: (v: unknown) => { success: boolean; data?: unknown } }).safeParse;
    if (typeof parse !== "function") return true;
    const result = parse.call(schema, undefined);
    if (!result.success || result.data !== undefined) return true;
  }
  return false;
}

/**
 * Routes `invoke` and `stream` of this agent instance straight to its compiled graph when initialization is a
 * no-op (see `stateNeedsInitialization`). Agents derived with `withConfig` are new instances and take
 * LangChain's path again, which gives the same result.
 */
export function callGraphDirectly(agent: ReactAgent, fields: Readonly<Record<string, StateField>>): ReactAgent {
  if (stateNeedsInitialization(fields)) return agent;
  const graph = agent.graph as unknown as {
    invoke(input: unknown, config?: unknown): Promise<unknown>;
    stream(input: unknown, config?: unknown): Promise<unknown>;
  };
  Object.defineProperties(agent, {
    invoke: { value: (input: unknown, config?: unknown) => graph.invoke(input, config), configurable: true, writable: true },
    stream: { value: (input: unknown, config?: unknown) => graph.stream(input, config), configurable: true, writable: true },
  });
  return agent;
}
