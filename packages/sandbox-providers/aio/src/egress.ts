import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { FetchLike } from "./http.js";
import type { EgressDenial } from "./sidecar/denials.js";
import type { EgressPolicy } from "./sidecar/policy.js";
import { RELAY_TOKEN_HEADER } from "./sidecar/relay.js";

/**
 * A restricted sandbox's egress control, through its sidecar's relay: the sandbox plugin finds it as
 * `sandbox.egress` and surfaces denials after tool calls. Structurally the `SandboxEgress` of
 * `@antler/plugin-sandbox`.
 */
export class SidecarEgressControl {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly fetchImpl: FetchLike = (input, init) => globalThis.fetch(input, init),
    /** The request's policy label; approvals change the policy but not its label. */
    readonly label: string = "default",
  ) {}

  async claimOldestDenial(): Promise<EgressDenial | undefined> {
    const body = (await this.call("POST", "/_antler/denials/claim")) as { denial: EgressDenial | null };
    return body.denial ?? undefined;
  }

  async drainDenials(): Promise<EgressDenial[]> {
    return ((await this.call("POST", "/_antler/denials/drain")) as { denials: EgressDenial[] }).denials;
  }

  /** Adds the destination to the sandbox's policy. Nothing is re-run: the model retries if it wants to. */
  async approve(host: string, port: number): Promise<EgressPolicy> {
    return ((await this.call("POST", "/_antler/policy/approve", { host, port })) as { policy: EgressPolicy }).policy;
  }

  async policy(): Promise<EgressPolicy> {
    return ((await this.call("GET", "/_antler/policy")) as { policy: EgressPolicy }).policy;
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      headers: { [RELAY_TOKEN_HEADER]: this.token, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) {
      throw new AntlerError(
        ErrorCodes.SANDBOX_UNAVAILABLE,
        `the sandbox's egress sidecar answered ${response.status} to ${method} ${path}`,
        {
          hint: "Check the sidecar container's logs (docker logs antler-aio-<id>-sidecar).",
        },
      );
    }
    return response.json();
  }
}
