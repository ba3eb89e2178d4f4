import type { GatewayRoute } from "@antler/plugin-runtime/routes";
import type { ChannelsHost } from "./host.js";

/**
 * `POST /channels/:provider/webhook`, outside `/api` and without the gateway's API keys: the provider verifies the
 * platform's signature or token itself, before it reads the body.
 */
export function webhookRoute(host: ChannelsHost): GatewayRoute {
  return {
    method: "POST",
    path: "/channels/:provider/webhook",
    mount: "root",
    auth: "none",
    summary: "Chat platform webhooks (verified by each provider's signature or secret token).",
    async handler(request) {
      const provider = host.providers().get(request.params.provider ?? "");
      if (!provider?.webhook) {
        return { status: 404, body: { error: { code: "ANTLER_ERR_CHANNEL_UNKNOWN", message: "no channel webhook here" } } };
      }
      return provider.webhook(request.request, host.runtime(request.client).sink(provider.id));
    },
  };
}
