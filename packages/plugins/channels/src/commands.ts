import type { EventContext } from "./event-context.js";

export interface ParsedCommand {
  /** Lower case, without the slash or a `@botname` suffix. */
  name: string;
  args: string;
}

/** `/model@my_bot gpt-x` → `{ name: "model", args: "gpt-x" }`; anything not starting with `/` is no command. */
export function parseCommand(text: string): ParsedCommand | undefined {
  const match = /^\s*\/([A-Za-z][A-Za-z0-9_]*)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text);
  if (!match) return undefined;
  return { name: (match[1] as string).toLowerCase(), args: (match[2] ?? "").trim() };
}

export const HELP_TEXT = [
  "Send me a message and I answer it in this chat's conversation.",
  "/new: start a new conversation",
  "/cancel: stop the answer that is running",
  "/status: this conversation's thread, agent and model",
  "/agent <name>: talk to one of your custom agents (/agent alone: the default)",
  "/model <name>: use another model (/model alone: the default)",
  "/help: this list",
].join("\n");

interface Current {
  threadId: string;
  agent: string | null;
  model: string | null;
  userId: string;
}

/** Handles a chat command; false when it is not one of ours (the text then goes to the agent as it is). */
export async function handleCommand(ctx: EventContext, command: ParsedCommand, current: Current): Promise<boolean> {
  const { runtime, provider, message } = ctx;
  const { client, store } = runtime;
  const save = (fields: { thread_id?: string; agent?: string | null; model?: string | null; pending_question?: null }) =>
    store.saveConversation(provider.id, message.chat, current.userId, { thread_id: current.threadId, ...fields });
  switch (command.name) {
    case "help":
    case "start":
      await ctx.reply(HELP_TEXT);
      return true;
    case "new": {
      const threadId = crypto.randomUUID();
      await save({ thread_id: threadId, pending_question: null });
      await ctx.reply("Started a new conversation.");
      return true;
    }
    case "cancel": {
      const runs = await client.listRuns(current.threadId, { userId: current.userId, limit: 10 }).catch(() => []);
      const live = runs.filter((r) => r.status === "running" || r.status === "pending" || r.status === "paused");
      // A pause's buttons would answer a run that is gone.
      if (live.some((r) => r.status === "paused")) await save({ pending_question: null });
      for (const run of live) await client.cancelRun(current.threadId, run.run_id, { userId: current.userId }).catch(() => {});
      await ctx.reply(
        live.length > 0 ? `Cancelled ${live.length === 1 ? "the running answer" : `${live.length} runs`}.` : "Nothing is running.",
      );
      return true;
    }
    case "status": {
      const runs = await client.listRuns(current.threadId, { userId: current.userId, limit: 1 }).catch(() => []);
      const last = runs[0];
      await ctx.reply(
        [
          `Connected as ${current.userId}.`,
          `Thread: ${current.threadId}`,
          `Agent: ${current.agent ?? "default"} · Model: ${current.model ?? "default"}`,
          `Last run: ${last ? `${last.status} (trace ${last.trace_id})` : "none yet"}`,
        ].join("\n"),
      );
      return true;
    }
    case "agent": {
      if (command.args === "") {
        await save({ agent: null });
        await ctx.reply("Back to the default agent.");
        return true;
      }
      try {
        await client.getAgent(command.args, { userId: current.userId });
      } catch {
        await ctx.reply(`No agent named "${command.args}". Your agents are listed by \`antler agents list\`.`);
        return true;
      }
      await save({ agent: command.args });
      await ctx.reply(`Now talking to ${command.args}.`);
      return true;
    }
    case "model": {
      if (command.args === "") {
        await save({ model: null });
        await ctx.reply("Back to the default model.");
        return true;
      }
      const models = client.kernel.listModels().map((m) => m.name);
      if (!models.includes(command.args)) {
        await ctx.reply(`No model named "${command.args}". Models: ${models.join(", ")}.`);
        return true;
      }
      await save({ model: command.args });
      await ctx.reply(`Using ${command.args} from now on.`);
      return true;
    }
    default:
      return false;
  }
}
