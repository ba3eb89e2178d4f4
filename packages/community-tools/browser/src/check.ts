import type { CliCommand, CliIO } from "@antler/kernel";
import type { BrowserConfig } from "./config.js";
import { isBrowserError } from "./errors.js";
import { chromiumArgs, connectOverCdp, launchChromium } from "./launch.js";
import { connectBrowserless, type Env } from "./remote.js";

export interface BrowserCheckResult {
  readonly version: string;
  /** The binary launched, or the CDP endpoint attached to. */
  readonly target: string;
  readonly args: readonly string[];
}

/** Starts the configured browser once, renders a page, and closes it again: proof the host setup works. */
export async function checkBrowser(config: BrowserConfig, env: Env = process.env): Promise<BrowserCheckResult> {
  const cdp = config.cdp_url;
  const remote = config.remote;
  const browser =
    remote !== undefined
      ? await connectBrowserless(remote, env)
      : cdp !== undefined
        ? await connectOverCdp(cdp)
        : await launchChromium({ executablePath: config.executable_path, headless: config.headless, extraArgs: config.extra_args });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.setContent("<title>antler</title><p>ok</p>");
    const text = await page.textContent("p");
    if (text !== "ok") throw new Error("the browser started but did not render a test page");
    await context.close();
    return {
      version: browser.version(),
      target: remote !== undefined ? `${remote.provider} ${remote.endpoint}` : (cdp ?? config.executable_path),
      args: remote !== undefined || cdp !== undefined ? [] : chromiumArgs({ extraArgs: config.extra_args }),
    };
  } finally {
    await browser.close().catch(() => {});
  }
}

/** `antler browser check`: the same launch the tools use, reported for an operator. */
export function browserCheckCommand(config: () => BrowserConfig, env?: Env): CliCommand {
  return {
    name: "browser check",
    summary: "Start the configured Chromium once and report its version, or what is wrong with the setup.",
    async run(_args: string[], io: CliIO) {
      try {
        const result = await checkBrowser(config(), env ?? io.env);
        io.stdout.write(`Chromium ${result.version} works (${result.target}${result.args.length ? ` ${result.args.join(" ")}` : ""}).\n`);
        return 0;
      } catch (err) {
        io.stderr.write(`${isBrowserError(err) ? err.message : `browser check failed: ${(err as Error)?.message ?? String(err)}`}\n`);
        return 1;
      }
    },
  };
}
