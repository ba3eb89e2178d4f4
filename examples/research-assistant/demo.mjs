// The example distribution: boots Antler from config.yaml, prints its plugins, tools and config check,
// then runs one tool call inside a traced run. Later issues grow this into the full offline agent demo.
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createKernel } from "@antler/kernel";

const here = dirname(fileURLToPath(import.meta.url));
const configPath = join(here, "config.yaml");

const kernel = await createKernel({ configPath });
try {
  await kernel.start();
  console.log(`Config check: ${relative(process.cwd(), configPath)} is valid`);
  console.log("\nPlugins:");
  for (const p of kernel.plugins) console.log(`  ${p.name}@${p.version}  (${p.origin.kind}: ${p.origin.spec})`);
  const entries = await kernel.assembleTools();
  console.log("\nTools:");
  for (const e of entries) console.log(`  ${e.tool.name.padEnd(14)} group=${e.group ?? "-"}  from ${e.plugin}`);

  const report = await kernel.run(
    async ({ traceId }) => {
      kernel.logger.info({ tool: "word_count" }, "calling a tool inside a traced run");
      const wordCount = entries.find((e) => e.tool.name === "word_count")?.tool;
      const result = await wordCount.invoke({ text: "Antler is a small TypeScript agent kernel with plugins." });
      return { traceId, result };
    },
    { threadId: "demo" },
  );
  console.log(`\nRun ${report.traceId}: word_count → ${report.result}`);
} finally {
  await kernel.close();
}
