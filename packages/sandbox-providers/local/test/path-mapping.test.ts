import { describe, expect, it } from "vitest";
import { SandboxPathMap } from "../src/index.js";

const dirs = {
  userData: "/srv/antler/users/u/threads/t/user-data",
  workspace: "/srv/antler/users/u/threads/t/user-data/workspace",
  uploads: "/srv/antler/users/u/threads/t/user-data/uploads",
  outputs: "/srv/antler/users/u/threads/t/user-data/outputs",
  skills: "/srv/antler/skills",
  acpWorkspace: "/srv/antler/users/u/threads/t/acp-workspace",
};

describe("SandboxPathMap translation", () => {
  const map = new SandboxPathMap("local:u/t", dirs);

  it.each([
    ["cat /mnt/user-data/workspace/a.txt", `cat ${dirs.workspace}/a.txt`],
    ["cd /mnt/user-data/outputs && ls", `cd ${dirs.outputs} && ls`],
    ["ls /mnt/user-data", `ls ${dirs.userData}`],
    ['cp "/mnt/user-data/uploads/x y.pdf" .', `cp "${dirs.uploads}/x y.pdf" .`],
    ["tool --out=/mnt/user-data/outputs/r.md", `tool --out=${dirs.outputs}/r.md`],
    ["PATH=/usr/bin:/mnt/skills/bin run", `PATH=/usr/bin:${dirs.skills}/bin run`],
    ["ls /mnt/acp-workspace/", `ls ${dirs.acpWorkspace}/`],
    ["see /mnt/skills.", `see ${dirs.skills}.`],
  ])("command %j → host paths", (command, expected) => {
    expect(map.commandToHost(command)).toBe(expected);
  });

  it.each([
    "echo /mnt/skillsets",
    "echo /mnt/user-data-old/x",
    "echo x/mnt/user-data/workspace",
    "echo /mnt/skills.bak",
    "echo /mnt/other",
  ])("leaves look-alike %j untouched", (command) => {
    expect(map.commandToHost(command)).toBe(command);
  });

  it("maps host paths in output back to virtual paths, and only whole paths", () => {
    expect(map.outputToVirtual(`${dirs.workspace}/a.txt\n${dirs.outputs}\n${dirs.skills}/x: error`)).toBe(
      "/mnt/user-data/workspace/a.txt\n/mnt/user-data/outputs\n/mnt/skills/x: error",
    );
    expect(map.outputToVirtual(`${dirs.userData}-backup /srv/antler/other`)).toBe(`${dirs.userData}-backup /srv/antler/other`);
  });

  it("round-trips: output of a translated command reads as the virtual text", () => {
    const command = "ls /mnt/user-data/workspace/src /mnt/skills/public /mnt/acp-workspace";
    expect(map.outputToVirtual(map.commandToHost(command))).toBe(command);
  });

  it("normalizes '.' segments and doubled slashes", () => {
    expect(map.normalize("/mnt/user-data/workspace/./a//b/")).toBe("/mnt/user-data/workspace/a/b");
  });
});
