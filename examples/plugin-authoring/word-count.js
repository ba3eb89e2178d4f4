// A complete third-party Antler plugin in one plain JavaScript file. It imports nothing: because it
// default-exports a function, the kernel that loads it passes in its own authoring API (definePlugin,
// defineTool, z), so the file works wherever config.yaml names it by path.
export default ({ definePlugin, defineTool, z }) =>
  definePlugin({
    name: "acme-word-count",
    version: "1.0.0",
    kernel: "^0.1.0",
    description: "Counts words and estimates reading time.",
    configSchema: z.object({
      words_per_minute: z.number().int().min(50).max(1000).default(230),
      max_chars: z.number().int().positive().default(100_000),
    }),
    setup(ctx) {
      const { words_per_minute, max_chars } = ctx.config;
      ctx.tools.add(
        defineTool({
          name: "word_count",
          description: "Count the words in a text and estimate how long it takes to read.",
          schema: z.object({ text: z.string().describe("The text to measure.") }),
          run({ text }) {
            if (text.length > max_chars) {
              return `Error: text is ${text.length} characters; word_count accepts at most ${max_chars} (plugins[].config.max_chars).`;
            }
            const words = text.trim() === "" ? 0 : text.trim().split(/\s+/).length;
            const minutes = Math.max(1, Math.round(words / words_per_minute));
            return JSON.stringify({ words, reading_minutes: words === 0 ? 0 : minutes });
          },
        }),
        { group: "text" },
      );
    },
  });
