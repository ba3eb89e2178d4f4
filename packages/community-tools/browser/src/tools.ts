import { join, relative, sep } from "node:path";
import {
  type AntlerTool,
  DEFAULT_USER_ID,
  isAntlerError,
  isWithin,
  type ThreadPaths,
  threadPaths,
  type UserDataDir,
  VIRTUAL_DIRS,
} from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { isBrowserError } from "./errors.js";
import { ELEMENT_REF_PATTERN } from "./frame-refs.js";
import { BROWSER_TOOL_NAMES } from "./names.js";
import type { BrowserSession, SessionScope } from "./session.js";
import type { BrowserSessionManager } from "./session-manager.js";

export { BROWSER_TOOL_NAMES };

export interface BrowserToolOptions {
  readonly manager: BrowserSessionManager;
  /** Antler's data folder; screenshots go to the thread's outputs folder under it. */
  readonly baseDir: string;
}

const ref = z
  .union([
    z.number().int().min(1),
    z.string().regex(ELEMENT_REF_PATTERN, "a ref is a number such as 12, or f2e12 for an element inside frame f2"),
  ])
  .describe(
    'The label in [brackets] before the element in the latest snapshot: a number such as 12, or a string such as "f2e12" for an element inside a frame (iframe).',
  );

/** The (user, thread) of a tool call: `thread_id` and `user_id` of the run context, set by the server. */
export function browserScopeOf(runtime: { context?: unknown }): SessionScope | undefined {
  const ctx = (runtime.context !== null && typeof runtime.context === "object" ? runtime.context : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const threadId = text(ctx.thread_id);
  if (threadId === undefined) return undefined;
  return { threadId, userId: text(ctx.user_id) ?? DEFAULT_USER_ID };
}

function message(runtime: ToolRuntime, name: string, content: string, status: "success" | "error" = "success"): ToolMessage {
  return new ToolMessage({ content, name, tool_call_id: runtime.toolCallId ?? "", status });
}

/** A browser error's message for the model: the coded message, or the first line of anything else. */
export function browserErrorText(err: unknown): string {
  if (isBrowserError(err)) return err.message;
  const text = err instanceof Error ? err.message : String(err);
  return isAntlerError(err) ? (text.split("\n")[0] ?? text) : text;
}

type Action = (session: BrowserSession, scope: SessionScope) => Promise<string | ToolMessage | Command>;

function browserTool<S extends z.ZodObject>(
  options: BrowserToolOptions,
  name: (typeof BROWSER_TOOL_NAMES)[number],
  description: string,
  schema: S,
  action: (args: z.output<S>, runtime: ToolRuntime) => Action,
): AntlerTool {
  return defineTool({
    name,
    description,
    schema,
    async run(args, runtime: ToolRuntime) {
      const scope = browserScopeOf(runtime);
      if (!scope) {
        return message(
          runtime,
          name,
          "Error: this run has no thread_id, so it has no browser session. This is a host configuration problem; tell the user.",
          "error",
        );
      }
      try {
        const result = await options.manager.withSession(scope, (session) => action(args, runtime)(session, scope));
        return typeof result === "string" ? message(runtime, name, result) : result;
      } catch (err) {
        return message(runtime, name, `Error: ${browserErrorText(err)}`, "error");
      }
    },
  });
}

/** The eight browser tools over one session manager. */
export function createBrowserTools(options: BrowserToolOptions): AntlerTool[] {
  const { manager, baseDir } = options;
  const tools: AntlerTool[] = [
    browserTool(
      options,
      "browser_navigate",
      "Open a web page (http or https) in this conversation's browser and return a snapshot of it. The snapshot lists the page text and numbers every link, button and form field as [ref] (elements inside a frame, such as an embedded login or payment form, get refs like [f1e7]); use those refs with browser_click and browser_type. The browser keeps its page, cookies and history across turns.",
      z.object({ url: z.string().min(1).describe("Absolute http(s) URL to open.") }),
      ({ url }) =>
        async (session) => {
          await session.navigate(url);
          return session.snapshot();
        },
    ),
    browserTool(
      options,
      "browser_snapshot",
      "Return a fresh snapshot of the current page: its text, and every link, button and form field numbered as [ref]. Take one when a ref was refused or the page may have changed.",
      z.object({}),
      () => async (session) => session.snapshot(),
    ),
    browserTool(
      options,
      "browser_click",
      "Click the element with this ref (from the latest snapshot) and return a fresh snapshot, after any page load the click caused.",
      z.object({ ref }),
      ({ ref: r }) =>
        async (session) => {
          await session.click(r);
          return session.snapshot();
        },
    ),
    browserTool(
      options,
      "browser_type",
      "Replace the content of a text field (input, textarea, editable element) with `text`, or pick the option of a select by its label. With submit: true, press Enter afterwards (submits most forms). Returns a fresh snapshot.",
      z.object({
        ref,
        text: z.string().max(20_000).describe("The text to enter; for a select, the option's label."),
        submit: z.boolean().default(false).describe("Press Enter after typing."),
      }),
      ({ ref: r, text, submit }) =>
        async (session) => {
          await session.type(r, text, submit);
          return session.snapshot();
        },
    ),
    browserTool(
      options,
      "browser_get_text",
      "Read the visible text of the current page, or of one element by ref (e.g. an article or a table), as plain text. Use it when a snapshot was cut or you need the full wording.",
      z.object({ ref: ref.optional().describe("Only this element's text; omit for the whole page.") }),
      ({ ref: r }) =>
        async (session) =>
          session.text(r),
    ),
    browserTool(
      options,
      "browser_back",
      "Go back to the previous page in this conversation's browser history and return its snapshot.",
      z.object({}),
      () => async (session) => {
        const moved = await session.back();
        return session.snapshot(moved ? undefined : "(There is no earlier page in this session's history; the page did not change.)");
      },
    ),
    browserTool(
      options,
      "browser_screenshot",
      `Save a PNG screenshot of the current page (the visible part, the full page, or one element by ref) into ${VIRTUAL_DIRS.outputs}/browser/ and show it to the user as an attachment. Returns the file's path.`,
      z.object({
        full_page: z.boolean().default(false).describe("Capture the whole scrollable page instead of the visible part."),
        ref: ref.optional().describe("Capture only this element."),
      }),
      ({ full_page, ref: r }, runtime) =>
        async (session, scope) => {
          const paths = threadPaths(baseDir, scope.userId, scope.threadId);
          const stamp = new Date().toISOString().replace(/[:.]/g, "-");
          const hostPath = join(paths.outputs, "browser", `${stamp}-${session.screenshotCount + 1}.png`);
          const size = await session.screenshot(hostPath, { fullPage: full_page, ref: r });
          const virtualPath = toVirtualPath(paths, hostPath) ?? hostPath;
          const reply = message(
            runtime,
            "browser_screenshot",
            `Saved a screenshot of ${session.page.url()} (${size} bytes) to ${virtualPath}; the user can see it as an attachment.`,
          );
          return new Command({ update: { artifacts: [virtualPath], messages: [reply] } });
        },
    ),
  ];
  tools.push(
    defineTool({
      name: "browser_close",
      description: "Close this conversation's browser session (page, cookies, history). The next browser_navigate starts a fresh one.",
      schema: z.object({}),
      async run(_args, runtime: ToolRuntime) {
        const scope = browserScopeOf(runtime);
        if (!scope) return message(runtime, "browser_close", "Error: this run has no thread_id, so it has no browser session.", "error");
        const closed = await manager.closeSession(scope);
        return message(runtime, "browser_close", closed ? "Closed the browser session." : "There was no open browser session.");
      },
    }),
  );
  return tools;
}

/** The virtual path of a host path inside this thread's user-data, or null if it is elsewhere. */
export function toVirtualPath(paths: ThreadPaths, hostPath: string): string | null {
  for (const dir of Object.keys(VIRTUAL_DIRS) as UserDataDir[]) {
    if (isWithin(paths[dir], hostPath)) {
      const rel = relative(paths[dir], hostPath).split(sep).join("/");
      return rel ? `${VIRTUAL_DIRS[dir]}/${rel}` : VIRTUAL_DIRS[dir];
    }
  }
  return null;
}
