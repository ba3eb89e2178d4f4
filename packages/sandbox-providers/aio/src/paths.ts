import { AntlerError, ErrorCodes, READ_ONLY_ROOTS, SANDBOX_VIRTUAL_ROOTS } from "@antler/kernel";

/** The top-level virtual folders under `/mnt`, each mapped to `<containerRoot>/<name>` in the container. */
const MAPPED_DIRS = ["user-data", "skills", "acp-workspace"] as const;
const VIRTUAL_MNT = "/mnt";
const USER_DATA = `${VIRTUAL_MNT}/user-data`;

const ALLOWED_ROOTS: readonly string[] = [
  SANDBOX_VIRTUAL_ROOTS.workspace,
  SANDBOX_VIRTUAL_ROOTS.uploads,
  SANDBOX_VIRTUAL_ROOTS.outputs,
  SANDBOX_VIRTUAL_ROOTS.skills,
  SANDBOX_VIRTUAL_ROOTS.acpWorkspace,
];

// A path character: a mapped prefix only counts when it is not part of a longer word or path.
const PATH_CHAR = "A-Za-z0-9._\\-";

export interface ResolveOptions {
  /** Refuse read-only roots (`/mnt/skills`, `/mnt/acp-workspace`). */
  write?: boolean;
}

/**
 * Translates Antler's virtual paths to paths inside the AIO container and back:
 *
 *   /mnt/user-data/{workspace,uploads,outputs}/…  ↔  <containerRoot>/user-data/{workspace,uploads,outputs}/…
 *   /mnt/skills/…                                ↔  <containerRoot>/skills/…
 *   /mnt/acp-workspace/…                         ↔  <containerRoot>/acp-workspace/…
 *
 * `containerRoot` is the container user's home (`/home/gem` in the AIO image) unless configured; set it to
 * `/mnt` when the provisioner mounts the thread folders at their virtual paths, and every mapping is the identity.
 */
export class AioPathMap {
  readonly containerRoot: string;
  private readonly toContainerPattern: RegExp;
  private readonly toVirtualPattern: RegExp;

  constructor(containerRoot: string) {
    const root = containerRoot.replace(/\/+$/, "");
    if (!root.startsWith("/") || root.split("/").includes("..")) {
      throw new AntlerError(
        ErrorCodes.CONFIG_INVALID,
        `container root ${JSON.stringify(containerRoot)} must be an absolute path below / without '..'`,
        {
          where: "container_root",
          hint: "Use the container's home folder (e.g. /home/gem) or /mnt.",
        },
      );
    }
    this.containerRoot = root;
    const names = MAPPED_DIRS.join("|");
    this.toContainerPattern = new RegExp(`(?<![${PATH_CHAR}/])${escapeRegExp(VIRTUAL_MNT)}/(${names})(?![${PATH_CHAR}])`, "g");
    this.toVirtualPattern = new RegExp(`(?<![${PATH_CHAR}/])${escapeRegExp(this.containerRoot)}/(${names})(?![${PATH_CHAR}])`, "g");
  }

  get identity(): boolean {
    return this.containerRoot === VIRTUAL_MNT;
  }

  /** The container's workspace folder. */
  get workspace(): string {
    return this.toContainer(SANDBOX_VIRTUAL_ROOTS.workspace);
  }

  /**
   * The container path of a virtual path. Relative paths are taken from the workspace. Refuses `..`, NUL
   * bytes and anything outside the virtual roots (PATH_UNSAFE), and writes under read-only roots
   * (SANDBOX_PATH_READ_ONLY).
   */
  toContainer(virtualPath: string, options: ResolveOptions = {}): string {
    const normalized = normalizeVirtual(virtualPath);
    const readOnlyRoot = READ_ONLY_ROOTS.find((root) => normalized === root || normalized.startsWith(`${root}/`));
    if (options.write && readOnlyRoot) {
      throw new AntlerError(
        ErrorCodes.SANDBOX_PATH_READ_ONLY,
        `path ${JSON.stringify(virtualPath)} is under the read-only ${readOnlyRoot}`,
        {
          hint: `Write under ${SANDBOX_VIRTUAL_ROOTS.workspace} or ${SANDBOX_VIRTUAL_ROOTS.outputs} instead.`,
        },
      );
    }
    const inside = ALLOWED_ROOTS.some((root) => normalized === root || normalized.startsWith(`${root}/`));
    // The user-data folder itself may be listed or read, never written as a file.
    if (!inside && !(normalized === USER_DATA && !options.write)) {
      throw new AntlerError(ErrorCodes.PATH_UNSAFE, `path ${JSON.stringify(virtualPath)} is outside the sandbox's folders`, {
        hint: `Use a path under ${ALLOWED_ROOTS.join(", ")}.`,
      });
    }
    return this.containerRoot + normalized.slice(VIRTUAL_MNT.length);
  }

  /** The virtual path of a container path, or `null` when it lies outside the mapped folders. */
  toVirtual(containerPath: string): string | null {
    for (const dir of MAPPED_DIRS) {
      const root = `${this.containerRoot}/${dir}`;
      if (containerPath === root || containerPath.startsWith(`${root}/`)) {
        return `${VIRTUAL_MNT}/${dir}${containerPath.slice(root.length)}`.replace(/\/+$/, "");
      }
    }
    return null;
  }

  /** Rewrites virtual paths inside a shell command to container paths. */
  commandToContainer(command: string): string {
    if (this.identity) return command;
    return command.replace(this.toContainerPattern, (_m, dir: string) => `${this.containerRoot}/${dir}`);
  }

  /** Rewrites container paths in command output (or error text) back to virtual paths. */
  textToVirtual(text: string): string {
    if (this.identity || text.length === 0) return text;
    return text.replace(this.toVirtualPattern, (_m, dir: string) => `${VIRTUAL_MNT}/${dir}`);
  }
}

function normalizeVirtual(virtualPath: string): string {
  if (typeof virtualPath !== "string" || virtualPath.length === 0 || virtualPath.includes("\0")) {
    throw new AntlerError(ErrorCodes.PATH_UNSAFE, `path ${JSON.stringify(virtualPath)} is empty or contains a NUL byte`, {
      hint: `Pass a path under ${SANDBOX_VIRTUAL_ROOTS.workspace}.`,
    });
  }
  const segments = virtualPath.split("/");
  if (segments.includes("..")) {
    throw new AntlerError(ErrorCodes.PATH_UNSAFE, `path ${JSON.stringify(virtualPath)} contains '..'`, {
      hint: "Use an absolute virtual path without '..' segments.",
    });
  }
  const absolute = virtualPath.startsWith("/") ? virtualPath : `${SANDBOX_VIRTUAL_ROOTS.workspace}/${virtualPath}`;
  const cleaned = absolute
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .join("/");
  return `/${cleaned}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
