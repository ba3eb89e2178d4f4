import { posix } from "node:path";
import { isAntlerError } from "@antler/kernel";
import { type AntlerClient, mimeTypeFor } from "@antler/plugin-runtime";
import {
  ErrorCode,
  type ListResourcesResult,
  McpError,
  type ReadResourceResult,
  type Resource,
  type ResourceLink,
  type ResourceTemplate,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpCaller } from "./caller.js";

/** MCP's "resource not found" error code (the spec's -32002). */
export const RESOURCE_NOT_FOUND = -32002;

const PREFIX = "antler://threads/";

/** The template every artifact URI follows: the thread id, then the artifact's virtual path without its leading `/`. */
export const ARTIFACT_URI_TEMPLATE = `${PREFIX}{thread_id}/artifacts/{+path}`;

export const artifactTemplate: ResourceTemplate = {
  uriTemplate: ARTIFACT_URI_TEMPLATE,
  name: "thread-artifact",
  title: "Thread artifact",
  description:
    "A file an Antler agent presented in a thread (its outputs), e.g. antler://threads/<thread_id>/artifacts/mnt/user-data/outputs/report.md. Readable by the thread's owner only.",
};

/** `antler://threads/<thread>/artifacts/<path>` for a virtual path such as `/mnt/user-data/outputs/report.md`. */
export function artifactUri(threadId: string, virtualPath: string): string {
  const segments = virtualPath.split("/").filter((s) => s !== "");
  return `${PREFIX}${encodeURIComponent(threadId)}/artifacts/${segments.map(encodeURIComponent).join("/")}`;
}

/** The thread id and virtual path of an artifact URI, or null when the URI is not one. */
export function parseArtifactUri(uri: string): { threadId: string; virtualPath: string } | null {
  if (!uri.startsWith(PREFIX)) return null;
  const match = /^([^/]+)\/artifacts\/(.+)$/.exec(uri.slice(PREFIX.length).split(/[?#]/)[0] ?? "");
  if (!match) return null;
  try {
    const threadId = decodeURIComponent(match[1] as string);
    const segments = (match[2] as string).split("/").map(decodeURIComponent);
    if (segments.some((s) => s === "" || s === "." || s === "..")) return null;
    return { threadId, virtualPath: `/${segments.join("/")}` };
  } catch {
    return null;
  }
}

/** A presented file as a tool result's `resource_link`. */
export function artifactLink(threadId: string, virtualPath: string): ResourceLink {
  return {
    type: "resource_link",
    uri: artifactUri(threadId, virtualPath),
    name: posix.basename(virtualPath),
    mimeType: mimeTypeFor(virtualPath),
  };
}

/**
 * `resources/list`: the artifacts of the caller's most recently active threads, `pageThreads` threads per page
 * (the cursor is the offset of the next page's first thread), so a page costs the same however many threads exist.
 */
export async function listArtifacts(
  client: AntlerClient,
  caller: McpCaller,
  options: { pageThreads: number; cursor?: string | undefined },
): Promise<ListResourcesResult> {
  if (options.pageThreads === 0) return { resources: [] };
  const offset = options.cursor === undefined ? 0 : Number(options.cursor);
  if (!Number.isInteger(offset) || offset < 0)
    throw new McpError(ErrorCode.InvalidParams, `invalid cursor ${JSON.stringify(options.cursor)}`);
  const threads = await client.listThreads({ userId: caller.userId, limit: options.pageThreads, offset });
  const resources: Resource[] = [];
  for (const thread of threads) {
    // One message is enough: the artifacts come with the state, not with the messages.
    const details = await client.getThread(thread.thread_id, { userId: caller.userId, messages: { limit: 1 } });
    for (const path of details.artifacts) {
      resources.push({
        ...artifactLink(thread.thread_id, path),
        description: `Presented in thread ${thread.thread_id}${thread.title ? ` (${thread.title})` : ""}`,
      });
    }
  }
  return { resources, ...(threads.length === options.pageThreads ? { nextCursor: String(offset + threads.length) } : {}) };
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-yaml|yaml|toml)\b)|\+(json|xml)\b/;

/** `resources/read` of one artifact URI, for its owner only: anything else is the spec's resource-not-found. */
export async function readArtifactResource(
  client: AntlerClient,
  caller: McpCaller,
  uri: string,
  options: { maxBytes: number },
): Promise<ReadResourceResult> {
  const target = parseArtifactUri(uri);
  const notFound = (why: string) => new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${why}`, { uri });
  if (!target) throw notFound(`not an artifact URI (expected ${ARTIFACT_URI_TEMPLATE})`);
  let artifact: Awaited<ReturnType<AntlerClient["getArtifact"]>>;
  try {
    artifact = await client.getArtifact(target.threadId, target.virtualPath, { userId: caller.userId });
  } catch (error) {
    // Another user's thread reads exactly like a missing one.
    if (isAntlerError(error)) throw notFound(`no artifact ${target.virtualPath} in thread ${target.threadId}`);
    throw error;
  }
  if (artifact.size > options.maxBytes) {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `artifact ${target.virtualPath} is ${artifact.size} bytes, over the ${options.maxBytes}-byte limit`,
      {
        uri,
      },
    );
  }
  const mimeType = artifact.mimeType;
  return {
    contents: [
      TEXT_TYPES.test(mimeType)
        ? { uri, mimeType, text: artifact.bytes.toString("utf8") }
        : { uri, mimeType, blob: artifact.bytes.toString("base64") },
    ],
  };
}
