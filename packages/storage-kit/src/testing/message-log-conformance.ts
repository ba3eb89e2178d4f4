import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { MessageLogRow, ThreadMessageLog } from "../message-log.js";

/** What `makeLog` gives the suite: a log, and for logs kept outside the process a second handle on the same storage. */
export interface MessageLogSubject {
  log: ThreadMessageLog;
  /**
   * Another log over the same storage (its own connection or pool), as a second process would open it: the suite
   * races writers across the two. Leave it out for a log that lives in one process's memory.
   */
  another?: () => Promise<ThreadMessageLog>;
  /** Releases what `makeLog` (and `another`) opened. Called after each test. */
  close?: () => unknown;
}

export interface MessageLogConformanceOptions {
  /** Per-test timeout in ms; default 30 000. */
  timeoutMs?: number;
}

/**
 * The behaviour every `ThreadMessageLog` must show, as a vitest suite: numbering, all-or-none appends (also
 * between two handles writing at once), range reads, namespace and thread isolation, size, deletion, pruning, and
 * data that comes back byte for byte. `makeLog` is called once per test; each test uses thread ids of its own, so
 * the storage behind it may be shared across tests.
 *
 * @example
 * runMessageLogConformance("SqliteMessageLog", async () => {
 *   const db = new Database(":memory:");
 *   return { log: new SqliteMessageLog(db), close: async () => db.close() };
 * });
 */
export function runMessageLogConformance(
  name: string,
  makeLog: () => Promise<ThreadMessageLog | MessageLogSubject>,
  options: MessageLogConformanceOptions = {},
): void {
  const timeout = options.timeoutMs ?? 30_000;
  let open: MessageLogSubject | undefined;

  async function subject(): Promise<MessageLogSubject> {
    const made = await makeLog();
    open = "log" in made ? made : { log: made };
    return open;
  }
  async function log(): Promise<ThreadMessageLog> {
    return (await subject()).log;
  }

  describe(`ThreadMessageLog conformance: ${name}`, () => {
    afterEach(async () => {
      const closing = open;
      open = undefined;
      await closing?.close?.();
    });

    it("answers lastSeq -1 for a thread, or a namespace, that holds no rows", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      expect(await l.lastSeq(t, "")).toBe(-1);
      expect(await l.append(t, "", rows(0, 2))).toBe(true);
      expect(await l.lastSeq(t, "")).toBe(1);
      expect(await l.lastSeq(t, "sub")).toBe(-1);
      expect(await l.read(threadId(), "", [0, 10])).toEqual([]);
    });

    it("reads the rows of several ranges once each, by seq, whatever order and overlap the ranges have", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      expect(await l.append(t, "", rows(0, 4))).toBe(true);
      expect(await l.append(t, "", rows(4, 10))).toBe(true);
      expect(seqsOf(await l.read(t, "", [0, 10]))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(seqsOf(await l.read(t, "", [7, 9, 1, 3]))).toEqual([1, 2, 7, 8]);
      expect(seqsOf(await l.read(t, "", [2, 5, 3, 6, 5, 6]))).toEqual([2, 3, 4, 5]);
      expect(seqsOf(await l.read(t, "", [8, 100, -5, 1]))).toEqual([0, 8, 9]);
      expect(await l.read(t, "", [])).toEqual([]);
      expect(await l.read(t, "", [4, 4, 20, 30])).toEqual([]);
      const [row] = await l.read(t, "", [3, 4]);
      expect(row?.type).toBe("json");
      expect(text(row?.data)).toBe(JSON.stringify({ n: 3 }));
    });

    it("reads many scattered ranges in one call, in seq order", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      expect(await l.append(t, "", rows(0, 3000))).toBe(true);
      const ranges: number[] = [];
      for (let seq = 2998; seq >= 0; seq -= 3) ranges.push(seq, seq + 1);
      const read = await l.read(t, "", ranges);
      expect(read).toHaveLength(1000);
      expect(seqsOf(read)).toEqual(Array.from({ length: 1000 }, (_, i) => 1 + i * 3));
    });

    it("rejects ranges that are not [from, to) pairs of integers", { timeout }, async () => {
      const l = await log();
      await expect(l.read(threadId(), "", [1, 2, 3])).rejects.toThrow(/pairs/);
      await expect(l.read(threadId(), "", [0, 1.5])).rejects.toThrow(/integer/);
      await expect(l.prune(threadId(), "", [0])).rejects.toThrow(/pairs/);
    });

    it("appends all or none: a batch with a taken seq answers false and writes nothing", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      expect(await l.append(t, "", rows(0, 2, "first"))).toBe(true);
      expect(await l.append(t, "", rows(1, 4, "second"))).toBe(false);
      expect(await l.lastSeq(t, "")).toBe(1);
      const read = await l.read(t, "", [0, 10]);
      expect(read.map((row) => text(row.data))).toEqual([JSON.stringify({ n: 0, tag: "first" }), JSON.stringify({ n: 1, tag: "first" })]);
      // A batch that repeats a seq of its own is refused the same way.
      expect(await l.append(t, "", [row(2), row(2)])).toBe(false);
      expect(await l.lastSeq(t, "")).toBe(1);
      expect(await l.append(t, "", rows(2, 3))).toBe(true);
      expect(await l.append(t, "", [])).toBe(true);
      expect(await l.lastSeq(t, "")).toBe(2);
    });

    it("lets exactly one of two writers racing for the same seqs win, and keeps the winner's batch whole", { timeout }, async () => {
      const l = await log();
      await raceWriters(l, l);
    });

    it("lets exactly one of two handles on the same storage win a race for the same seqs", { timeout }, async (ctx) => {
      const s = await subject();
      if (!s.another) {
        ctx.skip("this log lives in one process's memory; there is no second handle to race");
        return;
      }
      await raceWriters(s.log, await s.another());
    });

    it("numbers writers that retry on false (as the checkpointer does) into one gapless log with every batch intact", {
      timeout,
    }, async () => {
      const s = await subject();
      const other = s.another ? await s.another() : s.log;
      const t = threadId();
      const writers = [s.log, other, s.log, other];
      await Promise.all(writers.map((l, w) => appendWithRetry(l, t, w, 5)));
      const read = await s.log.read(t, "", [0, 1000]);
      expect(seqsOf(read)).toEqual(Array.from({ length: 4 * 5 * 3 }, (_, i) => i));
      // Each batch of 3 is contiguous and from one writer.
      for (let i = 0; i < read.length; i += 3) {
        const tags = read.slice(i, i + 3).map((r) => (JSON.parse(text(r.data)) as { tag: string }).tag);
        expect(new Set(tags).size).toBe(1);
      }
    });

    it("keeps namespaces and threads apart", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      const sibling = `${t}0`;
      expect(await l.append(t, "", rows(0, 3, "root"))).toBe(true);
      expect(await l.append(t, "sub", rows(0, 2, "sub"))).toBe(true);
      expect(await l.append(sibling, "", rows(0, 1, "sibling"))).toBe(true);
      expect(await l.lastSeq(t, "")).toBe(2);
      expect(await l.lastSeq(t, "sub")).toBe(1);
      expect(await l.lastSeq(sibling, "")).toBe(0);
      expect((await l.read(t, "sub", [0, 10])).map((r) => text(r.data))).toEqual([
        JSON.stringify({ n: 0, tag: "sub" }),
        JSON.stringify({ n: 1, tag: "sub" }),
      ]);
      expect(await l.prune(t, "sub", [])).toBe(2);
      expect(seqsOf(await l.read(t, "", [0, 10]))).toEqual([0, 1, 2]);
      expect(seqsOf(await l.read(sibling, "", [0, 10]))).toEqual([0]);
    });

    it("reports a thread's size as the bytes of its rows across namespaces", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      expect(await l.size(t)).toBe(0);
      expect(await l.append(t, "", [{ seq: 0, type: "bytes", data: new Uint8Array(100) }])).toBe(true);
      expect(await l.append(t, "sub", [{ seq: 0, type: "json", data: "é€" }])).toBe(true); // 2 + 3 UTF-8 bytes
      expect(await l.size(t)).toBe(105);
      expect(await l.size(threadId())).toBe(0);
    });

    it("drops every namespace of a thread on deleteThread, leaves other threads, and numbers from 0 again", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      const other = threadId();
      expect(await l.append(t, "", rows(0, 3))).toBe(true);
      expect(await l.append(t, "sub", rows(0, 3))).toBe(true);
      expect(await l.append(other, "", rows(0, 2))).toBe(true);
      await l.deleteThread(t);
      expect(await l.lastSeq(t, "")).toBe(-1);
      expect(await l.lastSeq(t, "sub")).toBe(-1);
      expect(await l.read(t, "", [0, 10])).toEqual([]);
      expect(await l.size(t)).toBe(0);
      expect(seqsOf(await l.read(other, "", [0, 10]))).toEqual([0, 1]);
      expect(await l.append(t, "", rows(0, 1))).toBe(true);
      await l.deleteThread(threadId()); // a thread it never saw
    });

    it("prunes the rows outside the kept ranges and answers how many it dropped", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      expect(await l.append(t, "", rows(0, 10))).toBe(true);
      expect(await l.prune(t, "", [5, 7, 0, 2, 1, 2])).toBe(6);
      expect(seqsOf(await l.read(t, "", [0, 100]))).toEqual([0, 1, 5, 6]);
      expect(await l.lastSeq(t, "")).toBe(6);
      expect(await l.prune(t, "", [0, 100])).toBe(0);
      expect(await l.prune(t, "", [6, 7])).toBe(3);
      expect(seqsOf(await l.read(t, "", [0, 100]))).toEqual([6]);
      expect(await l.prune(t, "", [])).toBe(1);
      expect(await l.lastSeq(t, "")).toBe(-1);
      expect(await l.prune(threadId(), "", [])).toBe(0);
      // The numbering after a prune goes on past what is left.
      expect(await l.append(t, "", rows(0, 2))).toBe(true);
      expect(await l.size(t)).toBeGreaterThan(0);
    });

    it("gives back bytes as bytes and strings as strings, unchanged", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      const binary = new Uint8Array(256 + 6);
      for (let i = 0; i < 256; i++) binary[i] = i;
      binary.set([0xff, 0xfe, 0xc3, 0x28, 0x80, 0x00], 256);
      const str = 'quote " backslash \\ nul \u0000 tab \t newline \n é 漢字 🦌 end';
      expect(
        await l.append(t, "", [
          { seq: 0, type: "bytes", data: binary },
          { seq: 1, type: "json", data: str },
          { seq: 2, type: "bytes", data: new Uint8Array(0) },
          { seq: 3, type: "json", data: "" },
        ]),
      ).toBe(true);
      const [b, s, emptyBytes, emptyString] = await l.read(t, "", [0, 4]);
      expect(b?.data).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(b?.data as Uint8Array).equals(Buffer.from(binary))).toBe(true);
      expect(b?.type).toBe("bytes");
      expect(typeof s?.data).toBe("string");
      expect(s?.data).toBe(str);
      expect(emptyBytes?.data).toBeInstanceOf(Uint8Array);
      expect(emptyBytes?.data.length).toBe(0);
      expect(emptyString?.data).toBe("");
    });

    it("stores and reads large rows and large batches", { timeout }, async () => {
      const l = await log();
      const t = threadId();
      const big = randomBytes(4 * 1024 * 1024);
      const bigText = "x".repeat(1024 * 1024);
      expect(
        await l.append(t, "", [
          { seq: 0, type: "bytes", data: big },
          { seq: 1, type: "json", data: bigText },
        ]),
      ).toBe(true);
      const [b, s] = await l.read(t, "", [0, 2]);
      expect(Buffer.from(b?.data as Uint8Array).equals(big)).toBe(true);
      expect(s?.data).toBe(bigText);
      // More rows in one batch than a statement takes parameters on some engines (65,535 in PostgreSQL).
      expect(await l.append(t, "", rows(2, 20_002))).toBe(true);
      expect(await l.lastSeq(t, "")).toBe(20_001);
      const tail = await l.read(t, "", [19_990, 30_000]);
      expect(seqsOf(tail)).toEqual(Array.from({ length: 12 }, (_, i) => 19_990 + i));
      // A batch that large is still all or none.
      expect(await l.append(t, "", rows(20_002, 40_000).concat([row(5)]))).toBe(false);
      expect(await l.lastSeq(t, "")).toBe(20_001);
      expect(await l.size(t)).toBeGreaterThan(big.length + bigText.length);
    });
  });
}

function threadId(): string {
  return `conformance-${randomBytes(6).toString("hex")}`;
}

function row(seq: number, tag?: string): MessageLogRow {
  return { seq, type: "json", data: new TextEncoder().encode(JSON.stringify(tag === undefined ? { n: seq } : { n: seq, tag })) };
}

function rows(from: number, to: number, tag?: string): MessageLogRow[] {
  return Array.from({ length: to - from }, (_, i) => row(from + i, tag));
}

function seqsOf(read: readonly MessageLogRow[]): number[] {
  return read.map((r) => r.seq);
}

function text(data: Uint8Array | string | undefined): string {
  if (data === undefined) return "";
  return typeof data === "string" ? data : new TextDecoder().decode(data);
}

/** Two writers append different batches under the same seqs at the same moment; one wins, whole. */
async function raceWriters(a: ThreadMessageLog, b: ThreadMessageLog): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const t = threadId();
    expect(await a.append(t, "", rows(0, 1, "seed"))).toBe(true);
    const [wonA, wonB] = await Promise.all([a.append(t, "", rows(1, 6, "a")), b.append(t, "", rows(1, 6, "b"))]);
    expect([wonA, wonB].filter(Boolean)).toHaveLength(1);
    const winner = wonA ? "a" : "b";
    const read = await b.read(t, "", [0, 100]);
    expect(seqsOf(read)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(read.slice(1).map((r) => (JSON.parse(text(r.data)) as { tag: string }).tag)).toEqual(Array(5).fill(winner));
  }
}

async function appendWithRetry(log: ThreadMessageLog, t: string, writer: number, batches: number): Promise<void> {
  for (let batch = 0; batch < batches; batch++) {
    for (let attempt = 0; ; attempt++) {
      const first = (await log.lastSeq(t, "")) + 1;
      if (await log.append(t, "", rows(first, first + 3, `w${writer}b${batch}`))) break;
      if (attempt > 50) throw new Error(`writer ${writer} never got its batch ${batch} in`);
    }
  }
}
