import { describe, expect, it } from "vitest";
import { decodeBlock, foldIntoBlocks, MAX_BLOCK } from "../src/run-events/sql-store.js";

const at = "2026-01-01T00:00:00.000Z";
const row = (seq: number, event = "custom", data = `{"n":${seq}}`) => ({
  seq,
  event,
  data,
  created_at: `${at.slice(0, -4)}${String(seq).padStart(3, "0")}Z`,
});

describe("folding a finished run's event rows into blocks", () => {
  it("folds consecutive events into one row holding each as an `<event> <json>` line, stamped with the last one's time", () => {
    const blocks = foldIntoBlocks("r1", [row(1, "metadata"), row(2), row(3, "end")]);
    expect(blocks).toEqual([
      {
        run_id: "r1",
        seq: 1,
        event_count: 3,
        event: "*",
        data: 'metadata {"n":1}\ncustom {"n":2}\nend {"n":3}',
        created_at: row(3).created_at,
      },
    ]);
  });

  it("deflates a block when that saves a quarter or more, and reads it back as the same events", () => {
    const token = (seq: number, word: string) =>
      row(seq, "messages-tuple", JSON.stringify({ type: "ai", id: "scripted-8ce980c7-1", content: `${word} ` }));
    const rows = [
      row(1, "metadata"),
      ..."the sum is three computed by the add tool that is the final answer".split(" ").map((w, i) => token(i + 2, w)),
    ];
    const [block] = foldIntoBlocks("r1", rows);
    expect(block?.event).toBe("*z");
    expect((block?.data.length ?? 0) / rows.reduce((n, r) => n + r.event.length + r.data.length + 2, 0)).toBeLessThan(0.75);
    expect(decodeBlock(1, block?.event ?? "", block?.data ?? "")).toEqual(rows.map((r) => ({ seq: r.seq, event: r.event, json: r.data })));
  });

  it("starts a new block at a gap in the sequence and after MAX_BLOCK events, and leaves a lone event as it is", () => {
    const rows = [...Array.from({ length: MAX_BLOCK + 2 }, (_, i) => row(i + 1)), row(MAX_BLOCK + 10)];
    const blocks = foldIntoBlocks("r1", rows);
    expect(blocks.map((b) => [b.seq, b.event_count])).toEqual([
      [1, MAX_BLOCK],
      [MAX_BLOCK + 1, 2],
    ]);
  });

  it("leaves events whose text could not be split back out of a block (a newline in the JSON, a space in the name) as rows", () => {
    expect(foldIntoBlocks("r1", [row(1), row(2, "custom", '{"a":"x\ny"}')])).toEqual([]);
    expect(foldIntoBlocks("r1", [row(1), row(2, "two words")])).toEqual([]);
  });
});
