import { describe, expect, it } from "vitest";
import { digestMessages, MessagesDigester } from "../src/run-events/values-stream.js";
import type { ValuesMessage } from "../src/values-delta.js";

const message = (id: string, content = `text of ${id}`): ValuesMessage =>
  ({ type: id.startsWith("h") ? "human" : "ai", id, content }) as ValuesMessage;

describe("MessagesDigester", () => {
  it("gives digestMessages' digest as a thread grows run after run, is rewritten, or shares another's messages", () => {
    const digester = new MessagesDigester(2);
    let thread: ValuesMessage[] = [];
    const seen: string[] = [];
    for (let turn = 0; turn < 30; turn++) {
      thread = [...thread, message(`h${turn}`), message(`a${turn}`)];
      if (turn === 10) thread = [message("summary"), ...thread.slice(-4)]; // a summarization: new first message
      if (turn === 20) thread[3] = message(`a-edited-${turn}`); // an edit in the middle
      const digest = digester.digest("t1", thread);
      expect(digest).toBe(digestMessages(thread));
      seen.push(digest);
      // Other threads in between (one evicts t1 half of the time), and one starting with the same objects.
      expect(digester.digest(`other-${turn % 2}`, thread.slice(0, 3))).toBe(digestMessages(thread.slice(0, 3)));
    }
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("is not misled by a list changed in place after it was digested", () => {
    const digester = new MessagesDigester();
    const list = [message("h0"), message("a0")];
    digester.digest("t", list);
    list[1] = message("a0", "changed");
    list.push(message("h1"));
    expect(digester.digest("t", list)).toBe(digestMessages(list));
  });
});
