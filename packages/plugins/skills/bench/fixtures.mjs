// What the two skills benchmarks share: the 50 installed skills, the scripted turn (two model calls, one tool
// call), rotated interleaved sampling and the ratio table.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolMessage } from "@langchain/core/messages";

/** 40 public skills and 10 custom ones, half of them with allowed-tools. */
export function writeBenchSkills(publicDir, customDir) {
  const write = (dir, name, i) => {
    mkdirSync(join(dir, name), { recursive: true });
    const policy = i % 2 === 0 ? "allowed-tools: [add, read_file]\n" : "";
    writeFileSync(
      join(dir, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: Skill number ${i} for the benchmark, with a description of typical length that says when to use it.\n${policy}---\n\n# ${name}\n\n${"Step. ".repeat(200)}\n`,
    );
  };
  for (let i = 0; i < 40; i++) write(publicDir, `public-skill-${i}`, i);
  for (let i = 0; i < 10; i++) write(customDir, `custom-skill-${i}`, i);
}

/** The scripted model: ask for `add`, then answer from its result. */
export const script = (messages) =>
  ToolMessage.isInstance(messages.at(-1))
    ? { text: "The answer is 3.", usage: { input_tokens: 20, output_tokens: 5 } }
    : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 10, output_tokens: 3 } };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * `batches` batches per case, interleaved; each round starts with the next case, so no case always runs right after
 * another (and pays for the garbage and cache state it leaves). `runBatch(case)` resolves to `{ wall, cpu }` per
 * turn. Returns the median wall and CPU ms per turn of each case.
 */
export async function sampleRotating(cases, batches, runBatch) {
  const samples = cases.map(() => []);
  for (let r = 0; r < batches; r++)
    for (let k = 0; k < cases.length; k++) {
      const i = (r + k) % cases.length;
      samples[i].push(await runBatch(cases[i]));
    }
  return samples.map((s) => ({ wall: median(s.map((x) => x.wall)), cpu: median(s.map((x) => x.cpu)) }));
}

/** Prints each case against the first, wall clock and this process's CPU time (less disturbed by other processes). */
export function printRatios(cases, results, { target, measured }) {
  const [base] = results;
  console.log("| case | ms per turn (median) | ratio | CPU ms per turn (median) | CPU ratio |\n|---|---|---|---|---|");
  for (const [i, c] of cases.entries())
    console.log(
      `| ${c.name} | ${results[i].wall.toFixed(2)} | ${(results[i].wall / base.wall).toFixed(3)}× | ${results[i].cpu.toFixed(2)} | ${(results[i].cpu / base.cpu).toFixed(3)}× |`,
    );
  const ratio = results[measured].wall / base.wall;
  console.log(
    `target skills + memory ≤ ${target}×: ${ratio <= target ? "met" : "NOT met"} (${ratio.toFixed(3)}×; CPU time ${(results[measured].cpu / base.cpu).toFixed(3)}×)`,
  );
}

/** 1,000 facts for the benchmark user, over eight topics, so a query matches some and not others. */
export function benchFacts() {
  const topics = ["typescript", "kubernetes", "sourdough", "marathons", "lisbon", "invoices", "guitar", "roadmap"];
  return Array.from({ length: 1000 }, (_, i) => ({
    content: `Works on ${topics[i % 8]} and ${topics[(i * 3) % 8]} item ${i}`,
    category: "context",
    confidence: 0.8,
    source: "bench",
  }));
}
