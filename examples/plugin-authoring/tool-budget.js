// A plugin written only from the README's "Writing a plugin" section: it refuses tool calls, ends a turn with
// its own reply and stop_reason, keeps a per-run service, and adds a CLI command. Like word-count.js it imports
// nothing; the kernel passes its authoring API in.
export default ({ definePlugin, createToken, z, refuseToolCall, endTurn, hookContext }) => {
  // One budget per run: `lifetime: "run"` builds it on first use in a run and drops it when the run ends.
  const Budget = createToken("acme-tool-budget.budget");

  return definePlugin({
    name: "acme-tool-budget",
    version: "1.0.0",
    kernel: "^0.1.0",
    description: "Caps tool calls per run and turns per thread; refuses blocked tools.",
    configSchema: z.object({
      max_tool_calls: z.number().int().min(0).default(5),
      max_turns: z.number().int().min(1).default(20),
      blocked_tools: z.array(z.string()).default([]),
    }),
    setup(ctx) {
      const { max_tool_calls, max_turns, blocked_tools } = ctx.config;
      ctx.provide(Budget, { lifetime: "run", useFactory: () => ({ used: 0 }) });

      ctx.middleware.add({
        name: "budget",
        async wrapToolCall(request, handler) {
          if (blocked_tools.includes(request.toolCall.name)) return refuseToolCall(request, "it is blocked on this server.");
          const budget = hookContext(request).resolve(Budget);
          if (budget.used >= max_tool_calls) {
            return refuseToolCall(request, `this run already used its ${max_tool_calls} tool calls; answer with what you have.`);
          }
          budget.used += 1;
          return handler(request);
        },
        async wrapModelCall(request, handler) {
          if (hookContext(request).turnNumber > max_turns) {
            return endTurn(`This thread reached its limit of ${max_turns} turns. Please start a new thread.`, {
              stopReason: "turn_limit",
            });
          }
          return handler(request);
        },
      });

      ctx.commands.add({
        name: "budget show",
        summary: "Print the tool-call and turn limits of acme-tool-budget.",
        options: { json: { type: "boolean", description: "Print them as JSON." } },
        run(_args, io) {
          const limits = { max_tool_calls, max_turns, blocked_tools };
          if (io.options.json) io.stdout.write(`${JSON.stringify(limits)}\n`);
          else
            io.stdout.write(
              `max_tool_calls: ${max_tool_calls}\nmax_turns: ${max_turns}\nblocked_tools: ${blocked_tools.join(", ") || "(none)"}\n`,
            );
          return 0;
        },
      });
    },
  });
};
