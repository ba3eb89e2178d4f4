// Grows a thread's saved history without running every turn: the long-thread benchmark and its smoke run use it
// to reach 1,000 or 5,000 messages in seconds.
//
// The messages go through the checkpointer the client itself uses (`kernel.openCheckpointer()`: the same file or
// database, the same saver class, so on delta storage the same message log), each batch as one checkpoint that
// continues the thread's latest one, as `update_state` would write it: same channels, the messages channel one
// version on, the parent linked. On storage that keeps each message once (the saver has a message log) every
// simulated turn (a question and its answer) gets a checkpoint of its own, so the thread has a realistic count of
// checkpoints behind it; on whole-list storage (`storage.checkpoint.mode: full`), where each checkpoint holds the
// whole list again, a segment is written in at most 10 checkpoints so seeding stays bounded.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";

/** A question and a one-paragraph answer, about the size of the benchmark's real turns. */
export function seededTurn(n) {
  return [
    new HumanMessage({ id: `seed-h${n}`, content: `Seeded question ${n}: what about item ${n}, in a sentence or two?` }),
    new AIMessage({
      id: `seed-a${n}`,
      content:
        `Seeded answer ${n}: item ${n} is fine. ` +
        "It was checked against the notes from the last review, the numbers agree with the sheet, and nothing in the " +
        "log suggests a problem since then. If anything changes, the owner will post an update in this thread, with " +
        "the date, what changed and what it affects, so that nobody has to read the whole history to catch up.",
    }),
  ];
}

/** Whether `saver` stores each message once (a delta saver from @antler/storage-kit exposes its log). */
export function storesMessagesOnce(saver) {
  return typeof saver?.log?.size === "function";
}

/**
 * Appends `count` messages (an even number: questions and answers) to the thread `threadKey` (the checkpoint
 * thread id, `checkpointThreadId(user, thread)`) through `saver`. `firstTurn` numbers the simulated turns so ids
 * stay unique in the thread. Returns the number of checkpoints written.
 */
export async function appendSeededMessages(saver, threadKey, count, firstTurn) {
  if (count % 2 !== 0) throw new Error(`appendSeededMessages: count must be even (questions and answers), got ${count}`);
  const latest = await saver.getTuple({ configurable: { thread_id: threadKey, checkpoint_ns: "" } });
  let config = latest?.config ?? { configurable: { thread_id: threadKey, checkpoint_ns: "" } };
  let checkpoint = latest?.checkpoint ?? emptyCheckpoint();
  let step = latest?.metadata?.step ?? -1;
  let messages = checkpoint.channel_values?.messages ?? [];
  const turns = count / 2;
  const turnsPerCheckpoint = storesMessagesOnce(saver) ? 1 : Math.max(1, Math.ceil(turns / 10));
  let written = 0;
  for (let done = 0; done < turns; done += turnsPerCheckpoint) {
    const added = [];
    for (let t = done; t < Math.min(turns, done + turnsPerCheckpoint); t++) added.push(...seededTurn(firstTurn + t));
    messages = [...messages, ...added];
    step += 1;
    const version = saver.getNextVersion(checkpoint.channel_versions?.messages);
    checkpoint = {
      ...checkpoint,
      id: uuid6(step),
      ts: new Date().toISOString(),
      channel_values: { ...checkpoint.channel_values, messages },
      channel_versions: { ...checkpoint.channel_versions, messages: version },
    };
    config = await saver.put(config, checkpoint, { source: "update", step, parents: {} }, { messages: version });
    written += 1;
  }
  return written;
}
