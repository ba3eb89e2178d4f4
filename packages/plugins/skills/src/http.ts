import { ErrorCodes, isAntlerError, type Kernel } from "@antler/kernel";
import { defineGatewayRoute, type GatewayReply, type GatewayRequest, type GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { SkillErrorCodes } from "./errors.js";
import { skillUpdateRequestSchema } from "./schemas.js";
import type { SkillsService } from "./service.js";

const STATUS: Record<string, number> = {
  [SkillErrorCodes.NOT_FOUND]: 404,
  [SkillErrorCodes.INVALID]: 400,
  [SkillErrorCodes.ARCHIVE_REFUSED]: 400,
  [SkillErrorCodes.EXISTS]: 409,
  [SkillErrorCodes.FORBIDDEN]: 403,
  [ErrorCodes.PATH_UNSAFE]: 400,
};

function errorReply(status: number, code: string, message: string, hint?: string, where?: string): GatewayReply {
  return { status, body: { error: { code, message, ...(hint ? { hint } : {}), ...(where ? { where } : {}) } } };
}

async function answer(fn: () => GatewayReply | Promise<GatewayReply>): Promise<GatewayReply> {
  try {
    return await fn();
  } catch (error) {
    if (isAntlerError(error) && STATUS[error.code] !== undefined) {
      // The request body itself over the archive limit is 413; anything wrong inside the archive is 400.
      const tooLarge = error.code === SkillErrorCodes.ARCHIVE_REFUSED && /the archive is \d+ bytes, over/.test(error.message);
      return errorReply(
        tooLarge ? 413 : (STATUS[error.code] as number),
        error.code,
        error.message.split("\n  hint:")[0] as string,
        error.hint,
        error.where,
      );
    }
    throw error;
  }
}

/**
 * The archive from the request: the raw body (`application/zip` or `application/octet-stream`), or the `file` field
 * of a multipart form. Reading stops past the limit, so an oversized upload is never held in memory.
 */
async function readArchive(request: Request, maxBytes: number): Promise<Uint8Array | GatewayReply> {
  const type = request.headers.get("content-type") ?? "";
  const multipart = type.startsWith("multipart/form-data");
  // A form adds its boundaries and headers around the file.
  const cap = maxBytes + (multipart ? 64 * 1024 : 0);
  const tooLarge = () =>
    errorReply(
      413,
      SkillErrorCodes.ARCHIVE_REFUSED,
      `skill archive: the upload is over the ${maxBytes}-byte limit`,
      "Make the skill smaller, or raise skills.install.max_archive_bytes. Nothing was installed.",
    );
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > cap) return tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  if (reader) {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        await reader.cancel().catch(() => undefined);
        return tooLarge();
      }
      chunks.push(value);
    }
  }
  const bytes = Buffer.concat(chunks);
  if (!multipart) return bytes;
  const form = await new Response(bytes, { headers: { "content-type": type } }).formData().catch(() => null);
  const file = form?.get("file");
  if (!file || typeof file === "string") {
    return errorReply(
      400,
      SkillErrorCodes.ARCHIVE_REFUSED,
      'skill archive: the form has no file field named "file"',
      'Send the .skill file as the form field "file", or as the raw body with Content-Type: application/zip.',
    );
  }
  return new Uint8Array(await file.arrayBuffer());
}

const listQuery = z.object({ enabled_only: z.enum(["true", "false"]).optional() });

/**
 * `/api/skills` routes, mounted by the gateway behind its auth. Every route acts for the authenticated user:
 * another user's custom skill answers 404, exactly like one that does not exist.
 */
export function skillsRoutes(resolve: (kernel: Kernel) => SkillsService): GatewayRoute[] {
  const skills = (request: GatewayRequest) => resolve(request.client.kernel);
  const user = (request: GatewayRequest) => ({ userId: request.userId });
  return [
    defineGatewayRoute({
      method: "GET",
      path: "/skills",
      summary: "List your skills (public and custom) with their enabled state; ?enabled_only=true for enabled ones.",
      query: listQuery,
      handler: (request) =>
        answer(() => ({ body: skills(request).listSkills({ ...user(request), enabledOnly: request.query.enabled_only === "true" }) })),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/skills/install",
      summary: "Install a .skill archive (raw application/zip body, or multipart field `file`) as your custom skill.",
      handler: (request) =>
        answer(async () => {
          const service = skills(request);
          const archive = await readArchive(request.request, service.limits.max_archive_bytes);
          if (!(archive instanceof Uint8Array)) return archive;
          return { status: 201, body: await service.installSkill(archive, user(request)) };
        }),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/skills/reload",
      summary: "Re-read every skill folder (after SKILL.md files were edited in place).",
      handler: (request) => answer(() => ({ body: skills(request).reloadSkills(user(request)) })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/skills/:name",
      summary: "One skill with its SKILL.md body.",
      handler: (request) => answer(() => ({ body: skills(request).getSkill(request.params.name ?? "", user(request)) })),
    }),
    defineGatewayRoute({
      method: "PUT",
      path: "/skills/:name",
      summary: "Enable or disable a skill for you: { enabled }.",
      body: skillUpdateRequestSchema,
      handler: (request) => answer(() => ({ body: skills(request).updateSkill(request.params.name ?? "", request.body, user(request)) })),
    }),
    defineGatewayRoute({
      method: "DELETE",
      path: "/skills/custom/:name",
      summary: "Remove one of your custom skills.",
      handler: (request) => answer(() => ({ body: skills(request).removeSkill(request.params.name ?? "", user(request)) })),
    }),
  ];
}
