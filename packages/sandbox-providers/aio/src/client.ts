import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { z } from "zod";
import {
  type BashExecRequest,
  type BashExecResult,
  type BashKillRequest,
  type BashOutputRequest,
  type BashOutputResult,
  type BashSessionCreateRequest,
  type BashSessionInfo,
  bashExecResponseSchema,
  bashOutputResponseSchema,
  bashSessionInfoResponseSchema,
  type FileGlobRequest,
  type FileGlobResult,
  type FileGrepRequest,
  type FileGrepResult,
  type FileListRequest,
  type FileListResult,
  type FileReadRequest,
  type FileReadResult,
  type FileWriteRequest,
  type FileWriteResult,
  fileGlobResponseSchema,
  fileGrepResponseSchema,
  fileListResponseSchema,
  fileOperationErrorSchema,
  fileReadResponseSchema,
  fileWriteResponseSchema,
  plainResponseSchema,
  type SandboxContext,
  sandboxContextSchema,
} from "./api.js";
import { HttpEndpoint, type HttpEndpointOptions } from "./http.js";

export type AioClientOptions = HttpEndpointOptions;

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

interface Envelope<T> {
  success: boolean;
  message?: string | null | undefined;
  data?: T | null | undefined;
}

/**
 * A typed client for the part of agent-infra's AIO sandbox HTTP API that Antler uses. Paths are the
 * container's own absolute paths; `AioSandbox` maps Antler's virtual paths onto them.
 */
export class AioClient {
  private readonly http: HttpEndpoint;

  constructor(options: AioClientOptions) {
    this.http = new HttpEndpoint({ service: "AIO sandbox", ...options });
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** `GET /v1/sandbox`: the container's home folder and version; also the readiness probe. */
  context(options: CallOptions = {}): Promise<SandboxContext> {
    return this.http.json("/v1/sandbox", sandboxContextSchema, options);
  }

  /** `POST /v1/bash/sessions/create`. */
  async createBashSession(body: BashSessionCreateRequest, options: CallOptions = {}): Promise<BashSessionInfo> {
    const res = await this.http.json("/v1/bash/sessions/create", bashSessionInfoResponseSchema, { ...options, body });
    return this.unwrap(res, "/v1/bash/sessions/create");
  }

  /** `POST /v1/bash/exec`: runs a command; answers `running` when it outlives `timeout` seconds. */
  async bashExec(body: BashExecRequest, options: CallOptions = {}): Promise<BashExecResult> {
    const res = await this.http.json("/v1/bash/exec", bashExecResponseSchema, { ...options, body });
    return this.unwrap(res, "/v1/bash/exec");
  }

  /** `POST /v1/bash/output`: output since the given offsets; long-polls with `wait`. */
  async bashOutput(body: BashOutputRequest, options: CallOptions = {}): Promise<BashOutputResult> {
    const res = await this.http.json("/v1/bash/output", bashOutputResponseSchema, { ...options, body });
    return this.unwrap(res, "/v1/bash/output");
  }

  /** `POST /v1/bash/kill`: signals the session's running command. */
  async bashKill(body: BashKillRequest, options: CallOptions = {}): Promise<void> {
    const res = await this.http.json("/v1/bash/kill", plainResponseSchema, { ...options, body });
    this.check(res, "/v1/bash/kill");
  }

  /** `POST /v1/bash/sessions/{id}/close`. */
  async closeBashSession(sessionId: string, options: CallOptions = {}): Promise<void> {
    const path = `/v1/bash/sessions/${encodeURIComponent(sessionId)}/close`;
    const res = await this.http.json(path, plainResponseSchema, { ...options, method: "POST" });
    this.check(res, path);
  }

  /** `POST /v1/file/read`: lines `start_line` (0-based) up to `end_line` (exclusive). */
  async readFile(body: FileReadRequest, options: CallOptions = {}): Promise<FileReadResult> {
    return this.fileCall("/v1/file/read", fileReadResponseSchema, body, options);
  }

  /** `POST /v1/file/write`: text (`utf-8`) or bytes (`base64`). */
  async writeFile(body: FileWriteRequest, options: CallOptions = {}): Promise<FileWriteResult> {
    return this.fileCall("/v1/file/write", fileWriteResponseSchema, body, options);
  }

  /** `POST /v1/file/list`. */
  async listPath(body: FileListRequest, options: CallOptions = {}): Promise<FileListResult> {
    return this.fileCall("/v1/file/list", fileListResponseSchema, body, options);
  }

  /** `POST /v1/file/glob`. */
  async globFiles(body: FileGlobRequest, options: CallOptions = {}): Promise<FileGlobResult> {
    return this.fileCall("/v1/file/glob", fileGlobResponseSchema, body, options);
  }

  /** `POST /v1/file/grep` (ripgrep in the container). */
  async grepFiles(body: FileGrepRequest, options: CallOptions = {}): Promise<FileGrepResult> {
    return this.fileCall("/v1/file/grep", fileGrepResponseSchema, body, options);
  }

  /** `GET /v1/file/download?path=`: raw bytes. */
  downloadFile(path: string, options: CallOptions = {}): Promise<Uint8Array> {
    return this.http.bytes("/v1/file/download", { ...options, query: { path } });
  }

  private async fileCall<R, S extends z.ZodType<Envelope<unknown>>>(
    path: string,
    schema: S,
    body: unknown,
    options: CallOptions,
  ): Promise<R> {
    const res = await this.http.json(path, schema, { ...options, body });
    const failure = fileOperationErrorSchema.safeParse(res.data);
    if (failure.success) {
      const f = failure.data;
      throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `${f.operation} ${f.path} failed in the AIO sandbox: ${f.message}`, {
        hint: fileHint(f.errno_name, f.error_type),
        details: { endpoint: path, path: f.path, errorType: f.error_type, errno: f.errno_name ?? null, retryable: f.retryable },
      });
    }
    return this.unwrap(res, path) as R;
  }

  private unwrap<T>(res: Envelope<T>, path: string): T {
    this.check(res, path);
    if (res.data === null || res.data === undefined) {
      throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `${path} on the AIO sandbox at ${this.baseUrl} answered no data`, {
        hint: "The sandbox image may be too old for this client; use an AIO image >= 1.9.3.",
        details: { endpoint: path },
      });
    }
    return res.data;
  }

  private check(res: Envelope<unknown>, path: string): void {
    if (!res.success) {
      throw new AntlerError(
        ErrorCodes.SANDBOX_EXEC_FAILED,
        `${path} on the AIO sandbox at ${this.baseUrl} failed: ${res.message ?? "no message"}`,
        {
          hint: "See the message; the sandbox refused the operation.",
          details: { endpoint: path },
        },
      );
    }
  }
}

function fileHint(errnoName: string | null | undefined, errorType: string): string {
  if (errnoName === "ENOENT" || /not.?found/i.test(errorType)) return "The path does not exist; list the folder to see what is there.";
  if (errnoName === "EACCES" || errnoName === "EPERM" || /permission/i.test(errorType)) return "The sandbox user may not access this path.";
  if (errnoName === "EISDIR" || /directory/i.test(errorType)) return "The path is a folder; pass a file path.";
  return "See the message; the sandbox could not perform the file operation.";
}
