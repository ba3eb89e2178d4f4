import { DenialLog } from "./denials.js";
import { type EgressPolicy, type EgressPolicyInput, egressPolicySchema } from "./policy.js";
import { createDnsResolver, EgressProxy, type ResolveAddresses } from "./proxy.js";
import { ApiRelay } from "./relay.js";

export { DenialLog, type EgressDenial } from "./denials.js";
export { ChunkedBodyEnd, forwardedHead, MAX_HEAD_BYTES, parseAuthority, parseRequestHead, type RequestHead } from "./http-head.js";
export {
  decideEgress,
  type EgressPolicy,
  type EgressPolicyInput,
  egressPolicySchema,
  hostMatches,
  normalizeHost,
  type PolicyVerdict,
  withApproval,
} from "./policy.js";
export { createDnsResolver, EgressProxy, type EgressProxyOptions, type ResolveAddresses } from "./proxy.js";
export { ApiRelay, type ApiRelayOptions, RELAY_TOKEN_HEADER } from "./relay.js";
export { readClientHelloSni, type SniRead } from "./sni.js";

/** Ports inside the sidecar container. */
export const SIDECAR_PROXY_PORT = 3128;
export const SIDECAR_RELAY_PORT = 8081;

export interface SidecarOptions {
  policy: EgressPolicyInput;
  token: string;
  /** The sandbox's AIO API as the sidecar reaches it. */
  upstream: string;
  host?: string;
  proxyPort?: number;
  relayPort?: number;
  /** DNS servers (`ip[:port]`) for the proxy; default the system's. Ignored when `resolve` is given. */
  dnsServers?: readonly string[];
  resolve?: ResolveAddresses;
  connectTimeoutMs?: number;
  log?: (event: string, fields: Record<string, unknown>) => void;
}

export interface RunningSidecar {
  proxyPort: number;
  relayPort: number;
  denials: DenialLog;
  policy(): EgressPolicy;
  close(): Promise<void>;
}

/** Starts the egress proxy and the API relay (in the container, or on the host for tests). */
export async function startSidecar(options: SidecarOptions): Promise<RunningSidecar> {
  let policy = egressPolicySchema.parse(options.policy);
  const denials = new DenialLog();
  const proxy = new EgressProxy({
    policy: () => policy,
    denials,
    resolve: options.resolve ?? createDnsResolver(options.dnsServers),
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  const relay = new ApiRelay({
    token: options.token,
    upstream: options.upstream,
    denials,
    policy: {
      get: () => policy,
      set: (next) => {
        policy = next;
      },
    },
    ...(options.log ? { log: options.log } : {}),
  });
  const host = options.host ?? "0.0.0.0";
  const proxyPort = await proxy.listen(options.proxyPort ?? SIDECAR_PROXY_PORT, host);
  let relayPort: number;
  try {
    relayPort = await relay.listen(options.relayPort ?? SIDECAR_RELAY_PORT, host);
  } catch (err) {
    await proxy.close();
    throw err;
  }
  return {
    proxyPort,
    relayPort,
    denials,
    policy: () => policy,
    close: async () => {
      await Promise.all([proxy.close(), relay.close()]);
    },
  };
}
