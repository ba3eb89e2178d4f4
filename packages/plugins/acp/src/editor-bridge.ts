import { isAbsolute, relative, resolve } from "node:path";
import type { AgentContext, ClientCapabilities } from "@agentclientprotocol/sdk";

/** Tool names of the client's file system, offered to runs only while `antler acp` serves a client that has it. */
export const READ_EDITOR_FILE = "read_editor_file";
export const WRITE_EDITOR_FILE = "write_editor_file";

/**
 * The ACP client's file system (`fs/read_text_file`, `fs/write_text_file`) as the editor tools reach it: which
 * capabilities the connected client offered, and which session (thread) has which working directory. One per
 * plugin instance; `antler acp` attaches its connection, and without one the editor tools are not offered.
 */
export class EditorBridge {
  private peer: AgentContext | undefined;
  private capabilities: ClientCapabilities["fs"] | undefined;
  private readonly cwds = new Map<string, string>();

  attach(peer: AgentContext): void {
    this.peer = peer;
  }

  setCapabilities(capabilities: ClientCapabilities | undefined): void {
    this.capabilities = capabilities?.fs;
  }

  detach(): void {
    this.peer = undefined;
    this.capabilities = undefined;
    this.cwds.clear();
  }

  openSession(threadId: string, cwd: string): void {
    this.cwds.set(threadId, cwd);
  }

  can(operation: "read" | "write"): boolean {
    if (!this.peer) return false;
    return operation === "read" ? this.capabilities?.readTextFile === true : this.capabilities?.writeTextFile === true;
  }

  /**
   * The absolute path the client is asked for: relative paths are taken from the session's cwd, and a path
   * outside it is refused, because the cwd is the project the user opened the agent on, not the whole disk.
   */
  resolvePath(threadId: string, path: string): { ok: true; path: string } | { ok: false; message: string } {
    const cwd = this.cwds.get(threadId);
    if (cwd === undefined) return { ok: false, message: "this thread is not an ACP session on the connected editor" };
    const full = resolve(cwd, path);
    const inside = relative(cwd, full);
    if (inside.startsWith("..") || isAbsolute(inside)) {
      return { ok: false, message: `${path} is outside the session's folder ${cwd}; only files under it can be read or written` };
    }
    return { ok: true, path: full };
  }

  async read(threadId: string, path: string, range: { line?: number | undefined; limit?: number | undefined }): Promise<string> {
    const peer = this.requirePeer();
    const response = await peer.request("fs/read_text_file", {
      sessionId: threadId,
      path,
      ...(range.line !== undefined ? { line: range.line } : {}),
      ...(range.limit !== undefined ? { limit: range.limit } : {}),
    });
    return response.content;
  }

  async write(threadId: string, path: string, content: string): Promise<void> {
    await this.requirePeer().request("fs/write_text_file", { sessionId: threadId, path, content });
  }

  private requirePeer(): AgentContext {
    if (!this.peer) throw new Error("no ACP client is connected");
    return this.peer;
  }
}
