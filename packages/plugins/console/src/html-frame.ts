import { type GatewayReply, type GatewayRequest, gatewayErrorReply } from "@antler/plugin-runtime/routes";
import { ConsoleErrorCodes } from "./config.js";

/** Where the artifacts panel frames an HTML artifact: `/api/console/artifact-html/<thread id>/<virtual path>`. */
export const ARTIFACT_HTML_PATH = "/console/artifact-html/:id/*";

/**
 * The response's own policy: a sandbox with an opaque origin (never `allow-same-origin`, so the page reaches no
 * cookie, no API and no DOM of the console), nothing fetched from the network, inline styles and `data:` images
 * allowed, inline scripts only when the operator set `artifacts.html_scripts`. The console frames it with the same
 * sandbox; the header keeps the rules when the URL is opened on its own.
 */
export function artifactHtmlPolicy(scripts: boolean): string {
  return [
    scripts ? "sandbox allow-scripts" : "sandbox",
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    "img-src data:",
    scripts ? "script-src 'unsafe-inline'" : "script-src 'none'",
    "frame-ancestors 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** Serves one HTML artifact of the caller's thread inline, under `artifactHtmlPolicy`. */
export async function serveArtifactHtml({ client, userId, params, request }: GatewayRequest, scripts: boolean): Promise<GatewayReply> {
  const threadId = params.id ?? "";
  const pathname = new URL(request.url).pathname;
  const marker = "/artifact-html/";
  const afterThread = pathname.slice(pathname.indexOf(marker) + marker.length);
  const rest = afterThread.slice(afterThread.indexOf("/") + 1);
  let virtualPath: string;
  try {
    virtualPath = `/${decodeURIComponent(rest)}`;
  } catch {
    return gatewayErrorReply(400, {
      code: "ANTLER_ERR_GATEWAY_INVALID_REQUEST",
      message: "the artifact path is not valid percent-encoding",
      hint: "Percent-encode each segment of the artifact's virtual path.",
    });
  }
  const artifact = await client.getArtifact(threadId, virtualPath, { userId });
  if (!artifact.mimeType.startsWith("text/html")) {
    return gatewayErrorReply(415, {
      code: ConsoleErrorCodes.NOT_HTML,
      message: `${virtualPath} is ${artifact.mimeType}, not HTML`,
      hint: `Read it from /api/threads/${threadId}/artifacts${virtualPath} instead.`,
      where: virtualPath,
    });
  }
  return new Response(new Uint8Array(artifact.bytes), {
    status: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": artifactHtmlPolicy(scripts),
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    },
  });
}
