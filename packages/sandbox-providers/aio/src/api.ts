/**
 * Every HTTP body this package sends or receives, as zod schemas. Two APIs live here:
 *
 * 1. The subset of agent-infra's AIO sandbox API that Antler uses (`/v1/sandbox`, `/v1/bash/*`, `/v1/file/*`).
 *    Shapes follow the sandbox's published OpenAPI document (`website/docs/public/v1/openapi.json` in
 *    github.com/agent-infra/sandbox, API version 1.9.4). Response objects are `.loose()`: newer images add
 *    fields, and a client for a subset must not break on them.
 * 2. Antler's sandbox provisioner API (`/api/sandboxes`), modelled on DeerFlow's provisioner service.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------------------------------------------
// AIO: the common envelope. Every JSON endpoint answers `{ success, message, data, hint }`.
// ---------------------------------------------------------------------------------------------------------------

function envelope<T extends z.ZodType>(data: T) {
  return z
    .object({
      success: z.boolean().default(true),
      message: z.string().nullish(),
      data: data.nullish(),
      hint: z.string().nullish(),
    })
    .loose();
}

/** `FileOperationError`: file endpoints answer it in `data` (with `success: false`) instead of a result. */
export const fileOperationErrorSchema = z
  .object({
    path: z.string(),
    operation: z.string(),
    message: z.string(),
    error_type: z.string(),
    retryable: z.boolean().default(false),
    errno: z.number().int().nullish(),
    errno_name: z.string().nullish(),
  })
  .loose();
export type FileOperationError = z.output<typeof fileOperationErrorSchema>;

/** FastAPI's 422 body. */
export const validationErrorBodySchema = z
  .object({ detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string() }).loose()) })
  .loose();

/** Any envelope, for reading the `message` of an error response. */
export const genericEnvelopeSchema = envelope(z.unknown());

// ---------------------------------------------------------------------------------------------------------------
// AIO: GET /v1/sandbox (readiness and context). The OpenAPI marks `detail` required; Antler only needs home_dir.
// ---------------------------------------------------------------------------------------------------------------

export const sandboxContextSchema = z
  .object({
    home_dir: z.string().min(1),
    version: z.string(),
    workspace: z.string().nullish(),
    detail: z.object({}).loose().optional(),
  })
  .loose();
export type SandboxContext = z.output<typeof sandboxContextSchema>;

// ---------------------------------------------------------------------------------------------------------------
// AIO: /v1/bash (subprocess pipes: separate stdout and stderr, per-command env). Needs image >= 1.9.3.
// ---------------------------------------------------------------------------------------------------------------

export const bashSessionCreateRequestSchema = z.object({
  session_id: z.string().optional(),
  exec_dir: z.string().optional(),
});
export type BashSessionCreateRequest = z.input<typeof bashSessionCreateRequestSchema>;

export const bashSessionInfoSchema = z
  .object({
    session_id: z.string(),
    status: z.enum(["ready", "closed"]),
    working_dir: z.string(),
  })
  .loose();
export const bashSessionInfoResponseSchema = envelope(bashSessionInfoSchema);
export type BashSessionInfo = z.output<typeof bashSessionInfoSchema>;

export const bashExecRequestSchema = z.object({
  session_id: z.string().optional(),
  command: z.string(),
  exec_dir: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  async_mode: z.boolean().optional(),
  /** Seconds the HTTP call waits before answering `running`; the command keeps going. */
  timeout: z.number().positive().optional(),
  /** Seconds after which the process is killed (`timed_out`). */
  hard_timeout: z.number().positive().optional(),
  /** 0 disables the server's middle truncation. */
  max_output_length: z.number().int().min(0).optional(),
});
export type BashExecRequest = z.input<typeof bashExecRequestSchema>;

export const commandStatusSchema = z.enum(["pending", "running", "completed", "timed_out", "killed"]);
export type CommandStatus = z.output<typeof commandStatusSchema>;

export const bashExecResultSchema = z
  .object({
    session_id: z.string(),
    command_id: z.string(),
    command: z.string(),
    status: commandStatusSchema,
    stdout: z.string().nullish(),
    stderr: z.string().nullish(),
    exit_code: z.number().int().nullish(),
    offset: z.number().int().default(0),
    stderr_offset: z.number().int().default(0),
  })
  .loose();
export const bashExecResponseSchema = envelope(bashExecResultSchema);
export type BashExecResult = z.output<typeof bashExecResultSchema>;

export const bashOutputRequestSchema = z.object({
  session_id: z.string(),
  command_id: z.string().optional(),
  offset: z.number().int().min(0).optional(),
  stderr_offset: z.number().int().min(0).optional(),
  wait: z.boolean().optional(),
  wait_timeout: z.number().positive().optional(),
});
export type BashOutputRequest = z.input<typeof bashOutputRequestSchema>;

export const bashOutputResultSchema = z
  .object({
    session_id: z.string(),
    stdout: z.string().default(""),
    stderr: z.string().default(""),
    offset: z.number().int().default(0),
    stderr_offset: z.number().int().default(0),
    command: z
      .object({ command_id: z.string(), command: z.string(), status: commandStatusSchema, exit_code: z.number().int().nullish() })
      .loose()
      .nullish(),
  })
  .loose();
export const bashOutputResponseSchema = envelope(bashOutputResultSchema);
export type BashOutputResult = z.output<typeof bashOutputResultSchema>;

export const bashKillRequestSchema = z.object({
  session_id: z.string(),
  signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT"]).optional(),
});
export type BashKillRequest = z.input<typeof bashKillRequestSchema>;

/** `POST /v1/bash/kill` and `POST /v1/bash/sessions/{id}/close` answer the plain envelope. */
export const plainResponseSchema = envelope(z.unknown());

// ---------------------------------------------------------------------------------------------------------------
// AIO: /v1/file. Paths are absolute container paths.
// ---------------------------------------------------------------------------------------------------------------

export const fileReadRequestSchema = z.object({
  file: z.string(),
  /** 0-based, inclusive. */
  start_line: z.number().int().min(0).optional(),
  /** 0-based, exclusive. */
  end_line: z.number().int().min(0).optional(),
});
export type FileReadRequest = z.input<typeof fileReadRequestSchema>;

export const fileReadResultSchema = z.object({ content: z.string(), file: z.string() }).loose();
export const fileReadResponseSchema = envelope(z.union([fileReadResultSchema, fileOperationErrorSchema]));
export type FileReadResult = z.output<typeof fileReadResultSchema>;

export const fileWriteRequestSchema = z.object({
  file: z.string(),
  content: z.string(),
  encoding: z.enum(["utf-8", "base64"]).optional(),
  append: z.boolean().optional(),
});
export type FileWriteRequest = z.input<typeof fileWriteRequestSchema>;

export const fileWriteResultSchema = z.object({ file: z.string(), bytes_written: z.number().int().nullish() }).loose();
export const fileWriteResponseSchema = envelope(z.union([fileWriteResultSchema, fileOperationErrorSchema]));
export type FileWriteResult = z.output<typeof fileWriteResultSchema>;

export const fileListRequestSchema = z.object({
  path: z.string(),
  recursive: z.boolean().optional(),
  show_hidden: z.boolean().optional(),
  max_depth: z.number().int().positive().optional(),
  include_size: z.boolean().optional(),
  sort_by: z.enum(["name", "size", "modified", "type"]).optional(),
});
export type FileListRequest = z.input<typeof fileListRequestSchema>;

export const fileInfoSchema = z
  .object({
    name: z.string(),
    path: z.string(),
    is_directory: z.boolean(),
    size: z.number().int().nullish(),
    /** ISO 8601. */
    modified_time: z.string().nullish(),
  })
  .loose();
export type FileInfo = z.output<typeof fileInfoSchema>;

export const fileListResultSchema = z.object({ path: z.string(), files: z.array(fileInfoSchema).default([]) }).loose();
export const fileListResponseSchema = envelope(z.union([fileListResultSchema, fileOperationErrorSchema]));
export type FileListResult = z.output<typeof fileListResultSchema>;

export const fileGlobRequestSchema = z.object({
  path: z.string(),
  pattern: z.string(),
  include_hidden: z.boolean().optional(),
  files_only: z.boolean().optional(),
  include_metadata: z.boolean().optional(),
  max_results: z.number().int().min(1).max(50_000).optional(),
  sort_by: z.enum(["path", "name", "size", "modified"]).optional(),
});
export type FileGlobRequest = z.input<typeof fileGlobRequestSchema>;

export const fileGlobResultSchema = z
  .object({
    path: z.string(),
    pattern: z.string(),
    files: z.array(z.object({ path: z.string(), name: z.string(), is_directory: z.boolean().default(false) }).loose()).default([]),
    truncated: z.boolean().default(false),
  })
  .loose();
export const fileGlobResponseSchema = envelope(z.union([fileGlobResultSchema, fileOperationErrorSchema]));
export type FileGlobResult = z.output<typeof fileGlobResultSchema>;

export const fileGrepRequestSchema = z.object({
  path: z.string(),
  pattern: z.string(),
  include: z.array(z.string()).optional(),
  case_insensitive: z.boolean().optional(),
  fixed_strings: z.boolean().optional(),
  max_results: z.number().int().min(1).max(10_000).optional(),
  recursive: z.boolean().optional(),
});
export type FileGrepRequest = z.input<typeof fileGrepRequestSchema>;

export const fileGrepResultSchema = z
  .object({
    path: z.string(),
    pattern: z.string(),
    matches: z.array(z.object({ file: z.string(), line_number: z.number().int(), line_content: z.string() }).loose()).default([]),
    truncated: z.boolean().default(false),
  })
  .loose();
export const fileGrepResponseSchema = envelope(z.union([fileGrepResultSchema, fileOperationErrorSchema]));
export type FileGrepResult = z.output<typeof fileGrepResultSchema>;

// `GET /v1/file/download?path=` answers raw bytes (application/octet-stream); no schema.

// ---------------------------------------------------------------------------------------------------------------
// Provisioner: Antler's small REST API for remote sandboxes (DeerFlow's provisioner shape).
// ---------------------------------------------------------------------------------------------------------------

export const provisionerStatusSchema = z.enum(["Pending", "Running", "Succeeded", "Failed", "Unknown", "NotFound"]);
export type ProvisionerStatus = z.output<typeof provisionerStatusSchema>;

/** `POST /api/sandboxes`. Idempotent per `sandbox_id`: a retry returns the same sandbox. */
export const provisionerCreateRequestSchema = z.object({
  sandbox_id: z.string().min(1).optional(),
  thread_id: z.string().min(1),
  user_id: z.string().min(1),
  image: z.string().min(1).optional(),
  /** Host folders to show at virtual paths (`/mnt/skills/...`); the provisioner maps them into its container layout. */
  mounts: z.array(z.object({ host_path: z.string().min(1), container_path: z.string().min(1), read_only: z.boolean() })).optional(),
});
export type ProvisionerCreateRequest = z.input<typeof provisionerCreateRequestSchema>;

/** Answer of `POST /api/sandboxes` and `GET /api/sandboxes/{id}`. */
export const provisionerSandboxSchema = z
  .object({
    sandbox_id: z.string().min(1),
    sandbox_url: z.url().nullish(),
    status: provisionerStatusSchema,
    thread_id: z.string().nullish(),
    user_id: z.string().nullish(),
  })
  .loose();
export type ProvisionerSandbox = z.output<typeof provisionerSandboxSchema>;

/** Answer of `DELETE /api/sandboxes/{id}`. */
export const provisionerDeleteResponseSchema = z.object({ ok: z.boolean(), sandbox_id: z.string() }).loose();
export type ProvisionerDeleteResponse = z.output<typeof provisionerDeleteResponseSchema>;

/** Error body the provisioner answers with a non-2xx status (FastAPI style). */
export const provisionerErrorBodySchema = z.object({ detail: z.string() }).loose();
