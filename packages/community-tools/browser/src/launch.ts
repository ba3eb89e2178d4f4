import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { type Browser, chromium } from "playwright-core";
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

function unavailable(path: string, problem: string, cause?: unknown): BrowserError {
  return new BrowserError(
    BrowserErrorCodes.UNAVAILABLE,
    `The browser is not available: ${problem} (executable_path: ${path}). ` +
      "Fix: install Debian's Chromium (apt-get install -y chromium, which provides /usr/bin/chromium), " +
      "or set executable_path in the @antler/tools-browser config to a Chromium or Chrome binary. " +
      "This is a host setup problem; tell the user.",
    { cause },
  );
}

/** Launches the system Chromium, or throws BROWSER_UNAVAILABLE with the fix when it is missing or will not start. */
export async function launchChromium(options: LaunchOptions): Promise<Browser> {
  const path = options.executablePath;
  try {
    await access(path, constants.X_OK);
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw unavailable(path, code === "ENOENT" ? "no file at that path" : `it is not executable (${code ?? "access failed"})`, err);
  }
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
