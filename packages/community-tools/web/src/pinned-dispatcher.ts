import type { LookupAddress, LookupOptions } from "node:dns";
import { createRequire } from "node:module";
import type { Agent } from "undici";
import type { UrlCheckOptions } from "./contract.js";
import { SsrfBlockedError } from "./guarded-fetch.js";
import { classifyAddress, systemLookup } from "./ssrf.js";

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici dispatcher whose connections resolve names through the SSRF guard: the addresses a socket
 * connects to are the ones checked, at connect time. `validatePublicHttpUrl` runs before each hop for a clear
 * refusal; this closes the gap between that check and the connection (DNS rebinding: a name that answers a
 * public address to the check and a private one to the connect). IP-literal hosts never reach `lookup` and
 * are covered by the per-hop check. Close it (`await dispatcher.close()`) when done.
 */
export function createPinnedDispatcher(options: UrlCheckOptions = {}): Agent {
  // undici (CommonJS, a few hundred files) loads with the first dispatcher, not with the package.
  const { Agent } = createRequire(import.meta.url)("undici") as typeof import("undici");
  const resolve = options.lookup ?? systemLookup;
  const lookup = (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (answers) => {
        const allowed = answers.filter((a) => {
          const verdict = classifyAddress(a.address);
          if (!verdict || verdict.class === "metadata") return false;
          return verdict.class === "public" || options.allowPrivateAddresses === true;
        });
        if (allowed.length !== answers.length || allowed.length === 0) {
          const bad = answers.find((a) => !allowed.includes(a));
          const verdict = bad ? classifyAddress(bad.address) : undefined;
          const reason = bad
            ? `host ${hostname} resolves to ${bad.address}${verdict ? `, ${verdict.description}` : ""} at connect time`
            : `host ${hostname} resolved to no addresses at connect time`;
          callback(Object.assign(new SsrfBlockedError(hostname, reason, -1), { code: "ANTLER_SSRF_BLOCKED" }) as NodeJS.ErrnoException, []);
          return;
        }
        const family =
          lookupOptions.family === 6 || lookupOptions.family === "IPv6"
            ? 6
            : lookupOptions.family === 4 || lookupOptions.family === "IPv4"
              ? 4
              : 0;
        const usable = family === 0 ? allowed : allowed.filter((a) => a.family === family);
        if (usable.length === 0) {
          callback(Object.assign(new Error(`host ${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }), []);
          return;
        }
        if (lookupOptions.all)
          callback(
            null,
            usable.map((a) => ({ address: a.address, family: a.family })),
          );
        else callback(null, (usable[0] as { address: string }).address, (usable[0] as { family: number }).family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
  return new Agent({ connect: { lookup: lookup as never } });
}
