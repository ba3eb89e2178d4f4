import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import type { Browser, BrowserType } from "playwright-core";
import { BrowserError, BrowserErrorCodes } from "./errors.js";

/**
 * Flags every launch gets. Chromium opens background connections of its own (component updates, sync, field
 * trials, QUIC probing) that a closed network refuses and that no page route sees; WebRTC could reach local
 * addresses past the route, so it is limited to proxied UDP (none).
 */
export const BASE_CHROMIUM_ARGS: readonly string[] = Object.freeze([
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
]);

export interface LaunchOptions {
  executablePath: string;
  headless: boolean;
  extraArgs?: readonly string[];
  /** Defaults to whether this process runs as root. */
  runningAsRoot?: boolean;
  timeoutMs?: number;
}

export function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/** The Chromium flags of a launch: `--no-sandbox` only as root, where Chromium's sandbox cannot start. */
export function chromiumArgs(options: Pick<LaunchOptions, "extraArgs" | "runningAsRoot">): string[] {
  const args = [...BASE_CHROMIUM_ARGS];
  if (options.runningAsRoot ?? isRoot()) args.unshift("--no-sandbox");
  return [...args, ...(options.extraArgs ?? [])];
}

const FIX =
  "Fix: install Debian's Chromium (apt-get install -y chromium, which provides /usr/bin/chromium), " +
  "or set executable_path in the @antler/tools-browser config to a Chromium or Chrome binary.";

function unavailable(path: string, problem: string, cause?: unknown): BrowserError {
  return new BrowserError(
    BrowserErrorCodes.UNAVAILABLE,
    `The browser is not available: ${problem} (executable_path: ${path}). ${FIX} This is a host setup problem; tell the user.`,
    { cause },
  );
}

/** What keeps `path` from being launched, or undefined when it is an executable file. Cheap: nothing is launched. */
async function executableProblem(path: string): Promise<{ problem: string; cause?: unknown } | undefined> {
  try {
    await access(path, constants.X_OK);
    if (!(await stat(path)).isFile()) return { problem: "it is a folder, not a program" };
    return undefined;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { problem: code === "ENOENT" ? "no file at that path" : `it is not executable (${code ?? "access failed"})`, cause: err };
  }
}

/** Throws BROWSER_UNAVAILABLE with the fix unless `path` is an executable file. */
export async function checkChromiumExecutable(path: string): Promise<void> {
  const found = await executableProblem(path);
  if (found) throw unavailable(path, found.problem, found.cause);
}

/**
 * The start-time form of the check, worded for an operator reading a failed start rather than for the model:
 * browser tools that cannot work should keep the host from coming up, not fail at a user's first browser call.
 */
export async function assertBrowserStartable(path: string): Promise<void> {
  const found = await executableProblem(path);
  if (!found) return;
  throw new BrowserError(
    BrowserErrorCodes.UNAVAILABLE,
    `[${BrowserErrorCodes.UNAVAILABLE}] the browser tools are enabled but Chromium cannot start: ${found.problem} (executable_path: ${path}). ` +
      `${FIX} Or remove @antler/tools-browser from plugins: to run without browser tools. \`antler browser check\` verifies the setup.`,
    { cause: found.cause },
  );
}

/**
 * Playwright's Chromium driver, imported on first use so a start can report a broken install with the fix instead
 * of failing the plugin's import. `specifier` exists for tests of that report.
 */
export async function loadPlaywright(specifier = "playwright-core"): Promise<BrowserType> {
  try {
    const mod = (await import(specifier)) as { chromium?: BrowserType; default?: { chromium?: BrowserType } };
    const chromium = mod.chromium ?? mod.default?.chromium;
    if (!chromium) throw new Error(`${specifier} has no chromium export`);
    return chromium;
  } catch (err) {
    throw new BrowserError(
      BrowserErrorCodes.UNAVAILABLE,
      `[${BrowserErrorCodes.UNAVAILABLE}] the browser tools cannot load Playwright (${specifier}): ${((err as Error)?.message ?? String(err)).split("\n")[0]}. ` +
        "Fix: reinstall the dependencies of @antler/tools-browser (pnpm install), or remove @antler/tools-browser from plugins:.",
      { cause: err },
    );
  }
}

/** Launches the system Chromium, or throws BROWSER_UNAVAILABLE with the fix when it is missing or will not start. */
export async function launchChromium(options: LaunchOptions): Promise<Browser> {
  const path = options.executablePath;
  await checkChromiumExecutable(path);
  const chromium = await loadPlaywright();
  try {
    return await chromium.launch({
      executablePath: path,
      headless: options.headless,
      args: chromiumArgs(options),
      timeout: options.timeoutMs ?? 30_000,
      // Playwright would otherwise install its own SIGINT/SIGTERM/SIGHUP handlers: the kernel owns no signals,
      // and a host that closes the kernel closes the browser.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (err) {
    const first = ((err as Error)?.message ?? String(err)).split("\n")[0];
    throw unavailable(path, `Chromium failed to start: ${first}`, err);
  }
}

/** Attaches to a running browser over CDP. Callers check `allow_unguarded_cdp` first. */
export async function connectOverCdp(url: string, timeoutMs = 30_000): Promise<Browser> {
  const chromium = await loadPlaywright();
  try {
    return await chromium.connectOverCDP(url, { timeout: timeoutMs });
  } catch (err) {
    throw new BrowserError(
      BrowserErrorCodes.UNAVAILABLE,
      `Could not attach to the browser at cdp_url ${url}: ${((err as Error)?.message ?? String(err)).split("\n")[0]}. ` +
        "Check that it runs with --remote-debugging-port and that the URL is right; this is a host setup problem, tell the user.",
      { cause: err },
    );
  }
}
