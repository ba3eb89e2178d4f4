import { ErrorCodes, isAntlerError } from "@antler/kernel";
import { describe, expect, it } from "vitest";
import { AioPathMap } from "../src/index.js";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isAntlerError(error) ? error.code : "not an AntlerError";
  }
  return undefined;
}

describe("AioPathMap", () => {
  const map = new AioPathMap("/home/gem");

  it("maps the virtual roots under the container root and back", () => {
    expect(map.toContainer("/mnt/user-data/workspace/a/b.txt")).toBe("/home/gem/user-data/workspace/a/b.txt");
    expect(map.toContainer("/mnt/user-data/outputs")).toBe("/home/gem/user-data/outputs");
    expect(map.toContainer("/mnt/skills/public/x.md")).toBe("/home/gem/skills/public/x.md");
    expect(map.toContainer("/mnt/acp-workspace/f")).toBe("/home/gem/acp-workspace/f");
    expect(map.toVirtual("/home/gem/user-data/uploads/u.pdf")).toBe("/mnt/user-data/uploads/u.pdf");
    expect(map.toVirtual("/home/gem/.bashrc")).toBeNull();
    expect(map.toVirtual("/home/gem/user-dataX/a")).toBeNull();
  });

  it("takes relative paths from the workspace and drops . and duplicate slashes", () => {
    expect(map.toContainer("notes/a.txt")).toBe("/home/gem/user-data/workspace/notes/a.txt");
    expect(map.toContainer("/mnt/user-data//workspace/./a.txt")).toBe("/home/gem/user-data/workspace/a.txt");
  });

  it("refuses .., NUL bytes and paths outside the roots", () => {
    expect(codeOf(() => map.toContainer("/mnt/user-data/workspace/../outputs/x"))).toBe(ErrorCodes.PATH_UNSAFE);
    expect(codeOf(() => map.toContainer("../x"))).toBe(ErrorCodes.PATH_UNSAFE);
    expect(codeOf(() => map.toContainer("/mnt/user-data/workspace/a\0b"))).toBe(ErrorCodes.PATH_UNSAFE);
    expect(codeOf(() => map.toContainer("/etc/passwd"))).toBe(ErrorCodes.PATH_UNSAFE);
    expect(codeOf(() => map.toContainer("/mnt/user-data-evil/x"))).toBe(ErrorCodes.PATH_UNSAFE);
    expect(codeOf(() => map.toContainer("/mnt/user-data/other/x"))).toBe(ErrorCodes.PATH_UNSAFE);
  });

  it("lets the user-data folder be read but not written", () => {
    expect(map.toContainer("/mnt/user-data")).toBe("/home/gem/user-data");
    expect(codeOf(() => map.toContainer("/mnt/user-data", { write: true }))).toBe(ErrorCodes.PATH_UNSAFE);
  });

  it("refuses writes under read-only roots and allows reads there", () => {
    expect(codeOf(() => map.toContainer("/mnt/skills/public/x.md", { write: true }))).toBe(ErrorCodes.SANDBOX_PATH_READ_ONLY);
    expect(codeOf(() => map.toContainer("/mnt/acp-workspace", { write: true }))).toBe(ErrorCodes.SANDBOX_PATH_READ_ONLY);
    expect(map.toContainer("/mnt/skills/public/x.md")).toBe("/home/gem/skills/public/x.md");
  });

  it("rewrites whole virtual paths in commands and container paths in output, nothing else", () => {
    expect(map.commandToContainer("cat /mnt/user-data/workspace/a.txt > /mnt/user-data/outputs/b")).toBe(
      "cat /home/gem/user-data/workspace/a.txt > /home/gem/user-data/outputs/b",
    );
    expect(map.commandToContainer("ls /mnt/skills;echo '/mnt/acp-workspace'")).toBe("ls /home/gem/skills;echo '/home/gem/acp-workspace'");
    expect(map.commandToContainer("ls /srv/mnt/skills /mnt/skillsX /mnt/user-data-x")).toBe(
      "ls /srv/mnt/skills /mnt/skillsX /mnt/user-data-x",
    );
    expect(map.textToVirtual("/home/gem/user-data/workspace\n/home/gem/.cache /home/gem/skills:")).toBe(
      "/mnt/user-data/workspace\n/home/gem/.cache /mnt/skills:",
    );
  });

  it("is the identity for container root /mnt (thread data mounted natively)", () => {
    const native = new AioPathMap("/mnt");
    expect(native.identity).toBe(true);
    expect(native.toContainer("/mnt/user-data/workspace/a")).toBe("/mnt/user-data/workspace/a");
    expect(native.commandToContainer("ls /mnt/skills")).toBe("ls /mnt/skills");
  });

  it("refuses a relative or climbing container root", () => {
    expect(codeOf(() => new AioPathMap("home/gem"))).toBe(ErrorCodes.CONFIG_INVALID);
    expect(codeOf(() => new AioPathMap("/home/../etc"))).toBe(ErrorCodes.CONFIG_INVALID);
    expect(codeOf(() => new AioPathMap("/"))).toBe(ErrorCodes.CONFIG_INVALID);
  });
});
