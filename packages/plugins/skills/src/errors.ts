import { AntlerError, type AntlerErrorOptions, type ErrorCode } from "@antler/kernel";

/**
 * The skills plugin's error codes, in the kernel's `ANTLER_ERR_*` shape, carried by an ordinary `AntlerError`
 * (the CLI prints message and hint; the gateway answers 400 or 404).
 */
export const SkillErrorCodes = {
  /** SKILL.md is missing, or its frontmatter is malformed, incomplete or has unknown keys. */
  INVALID: "ANTLER_ERR_SKILL_INVALID",
  /** No skill of that name for this user (another user's custom skill included). */
  NOT_FOUND: "ANTLER_ERR_SKILL_NOT_FOUND",
  /** A `.skill` archive was refused: not a ZIP, unsafe entries, too big, or a skill that cannot be installed. */
  ARCHIVE_REFUSED: "ANTLER_ERR_SKILL_ARCHIVE_REFUSED",
  /** A skill of that name already exists (public or custom). */
  EXISTS: "ANTLER_ERR_SKILL_EXISTS",
  /** The operation is not allowed on this skill (removing a public skill). */
  FORBIDDEN: "ANTLER_ERR_SKILL_FORBIDDEN",
} as const;

export type SkillErrorCode = (typeof SkillErrorCodes)[keyof typeof SkillErrorCodes];

export function skillError(code: SkillErrorCode, message: string, options: AntlerErrorOptions = {}): AntlerError {
  return new AntlerError(code as unknown as ErrorCode, message, options);
}

export function isSkillError(value: unknown, code?: SkillErrorCode): value is AntlerError {
  return (
    value instanceof AntlerError && (code === undefined ? value.code.startsWith("ANTLER_ERR_SKILL_") : (value.code as string) === code)
  );
}
