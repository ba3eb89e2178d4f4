import type { Browser } from "playwright-core";
import type { RemoteBrowserConfig } from "./config.js";
import { BrowserError, BrowserErrorCodes } from "./errors.js";
import { loadPlaywright } from "./launch.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** The token of `remote`, or REMOTE_AUTH naming the variable to set. */
export function remoteToken(remote: RemoteBrowserConfig, env: Env): string {
  const token = env[remote.token_env]?.trim();
  if (token) return token;
  throw new BrowserError(
    BrowserErrorCodes.REMOTE_AUTH,
    `[${BrowserErrorCodes.REMOTE_AUTH}] the remote browser (${remote.provider} at ${remote.endpoint}) needs an API token, and the ${remote.token_env} environment variable (remote.token_env) is not set. ` +
      `Fix: export ${remote.token_env}=<your ${remote.provider} API token> before starting Antler, or remove remote: from the @antler/tools-browser config to launch a local Chromium. This is a host setup problem; tell the user.`,
  );
}

/** The URL browserless documents for a CDP connection: the endpoint with the token as its `token` query parameter. */
export function browserlessUrl(remote: RemoteBrowserConfig, token: string): string {
  const url = new URL(remote.endpoint);
  url.searchParams.set("token", token);
  return url.href;
}

/** `text` with every spelling of `secret` a URL or an error message may carry replaced by `***`. */
export function redact(text: string, secret: string): string {
  let out = text;
  for (const form of new Set([secret, encodeURIComponent(secret), new URLSearchParams({ t: secret }).toString().slice(2)])) {
    if (form) out = out.split(form).join("***");
  }
  return out;
}

/**
 * Connects to a browserless browser over CDP. Each connection is a fresh browser of its own on the service, and
 * the plugin screens it like a launched one: its sessions are contexts the plugin creates with the request guard
 * installed, and Playwright's route fetches run in this process, so every routed request is checked and sent
 * from here. The token never appears in an error or log: a refused token is REMOTE_AUTH, anything else UNAVAILABLE.
 */
export async function connectBrowserless(remote: RemoteBrowserConfig, env: Env, timeoutMs = 30_000): Promise<Browser> {
  const token = remoteToken(remote, env);
  const chromium = await loadPlaywright();
  try {
    return await chromium.connectOverCDP(browserlessUrl(remote, token), { timeout: timeoutMs });
  } catch (err) {
    const first = redact(((err as Error)?.message ?? String(err)).split("\n")[0] ?? "", token);
    const cause = new Error(redact((err as Error)?.message ?? String(err), token));
    if (/\b(401|403)\b|unauthori[sz]ed|forbidden/i.test(first)) {
      throw new BrowserError(
        BrowserErrorCodes.REMOTE_AUTH,
        `[${BrowserErrorCodes.REMOTE_AUTH}] ${remote.provider} at ${remote.endpoint} refused the API token from ${remote.token_env} (${first}). ` +
          `Fix: put a valid ${remote.provider} API token in the ${remote.token_env} environment variable and restart. This is a host setup problem; tell the user.`,
        { cause },
      );
    }
    throw new BrowserError(
      BrowserErrorCodes.UNAVAILABLE,
      `The remote browser (${remote.provider} at ${remote.endpoint}) could not be reached: ${first}. ` +
        "Check the endpoint and that the service is up; this is a host setup problem, tell the user.",
      { cause },
    );
  }
}
