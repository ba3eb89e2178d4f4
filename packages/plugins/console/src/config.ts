import { z } from "zod";

export const PLUGIN_NAME = "@antler/plugin-console";

/** The custom stream event the console's timeline is drawn from: one per model call and per tool call. */
export const CONSOLE_SPAN_EVENT = "console_span";

export const consoleConfigSchema = z.strictObject({
  /**
   * Folder with the built single-page app (`index.html` and `assets/`). Default: the package's own `dist/web`,
   * written by the workspace build.
   */
  static_dir: z.string().min(1).optional(),
  /** Emit a `console_span` custom event per model call and tool call (start, duration, outcome) for the run timeline. */
  timeline: z.boolean().default(true),
  /**
   * Middleware hook calls (beforeAgent, beforeModel, afterModel, afterAgent) at least this long are drawn on the
   * timeline too; 0 draws every one (many small events per model call).
   */
  middleware_span_min_ms: z.number().min(0).default(1),
  /** How the artifacts panel shows files. */
  artifacts: z
    .strictObject({
      /**
       * Let scripts run in HTML artifacts. The page is always shown in a sandboxed frame with an opaque origin (no
       * cookies, no API access, no same-origin DOM); with `false` (default) its scripts do not run at all.
       */
      html_scripts: z
        .boolean()
        .default(false)
        .describe("Let scripts run in HTML artifacts (always in a sandboxed frame with an opaque origin)."),
      /** Rows of a CSV artifact drawn as a table; the rest is counted and left to the download. */
      csv_max_rows: z
        .number()
        .int()
        .min(1)
        .max(100_000)
        .default(1000)
        .describe("Rows of a CSV artifact drawn as a table; the rest is counted and left to the download."),
    })
    .prefault({})
    .describe("How the artifacts panel shows files."),
  /**
   * Prompts offered on an empty thread, as cards: a click sends the prompt as the thread's first message. A string
   * is its own title; `{ title, prompt }` shows the title and sends the prompt.
   */
  suggestions: z
    .array(
      z.union([
        z.string().trim().min(1).max(2000),
        z.strictObject({
          title: z.string().trim().min(1).max(80).describe("What the card says."),
          prompt: z.string().trim().min(1).max(2000).describe("The message a click sends."),
        }),
      ]),
    )
    .max(12)
    .default([])
    .describe("Prompts offered on an empty thread (at most 12): a string, or { title, prompt }; a click sends the prompt."),
});

/** A suggestion as the page gets it: a string one is its own title. */
export interface ConsoleSuggestion {
  title: string;
  prompt: string;
}

export function consoleSuggestions(config: Pick<ConsoleConfig, "suggestions">): ConsoleSuggestion[] {
  return config.suggestions.map((s) => (typeof s === "string" ? { title: s, prompt: s } : s));
}

export type ConsoleConfig = z.output<typeof consoleConfigSchema>;
export type ConsoleConfigInput = z.input<typeof consoleConfigSchema>;

/** The console's error codes, in the kernel's `ANTLER_ERR_*` shape. */
export const ConsoleErrorCodes = Object.freeze({
  /** The SPA has not been built into `static_dir` (no `index.html` there). */
  NOT_BUILT: "ANTLER_ERR_CONSOLE_NOT_BUILT",
  /** The HTML view of an artifact was asked for a file that is not HTML. */
  NOT_HTML: "ANTLER_ERR_CONSOLE_ARTIFACT_NOT_HTML",
});
