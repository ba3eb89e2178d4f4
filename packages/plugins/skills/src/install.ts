import { randomUUID } from "node:crypto";
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import type { Entry, ZipFile } from "yauzl";
import type { SkillCatalog, SkillRecord } from "./catalog.js";
import type { SkillInstallLimits } from "./config.js";
import { SkillErrorCodes, skillError } from "./errors.js";
import { parseSkillFile, skillNameProblem } from "./frontmatter.js";

/** One file of a validated archive, relative to the skill's folder. */
interface ArchiveFile {
  path: string;
  bytes: Buffer;
}

export interface ValidatedSkillArchive {
  name: string;
  files: ArchiveFile[];
  /** Folders to create (explicit directory entries and every file's parents), relative to the skill's folder. */
  folders: string[];
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
/** "Made by" values whose high attribute bits are a Unix mode (Unix, macOS). */
const UNIX_HOSTS = new Set([3, 19]);
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters in entry names are what this refuses
const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_ENTRY_NAME = 512;

function refuse(message: string, hint: string): Error {
  return skillError(SkillErrorCodes.ARCHIVE_REFUSED, message, {
    where: "skill archive",
    hint: `${hint} Nothing was installed.`,
  });
}

/** Why an entry name cannot be extracted safely, or null. yauzl refuses `..`, absolute names and backslashes first. */
function entryNameProblem(name: string): string | null {
  if (name.length === 0) return "an empty name";
  if (name.length > MAX_ENTRY_NAME) return `a name longer than ${MAX_ENTRY_NAME} characters`;
  if (CONTROL.test(name)) return "control characters in its name";
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "an absolute path";
  const parts = name.replace(/\/$/, "").split("/");
  if (parts.includes("..")) return 'a ".." segment (zip-slip)';
  if (parts.some((p) => p === "" || p === ".")) return 'an empty or "." path segment';
  return null;
}

function describeYauzlError(err: Error): { message: string; hint: string } {
  const text = err.message;
  if (/invalid relative path/i.test(text)) {
    return { message: `an entry escapes the skill folder (${text})`, hint: 'Remove entries whose names contain "..".' };
  }
  if (/absolute path/i.test(text))
    return { message: `an entry has an absolute path (${text})`, hint: "Use paths relative to the skill folder." };
  if (/invalid characters/i.test(text)) {
    return { message: `an entry name has a backslash (${text})`, hint: "Zip the folder with a tool that writes forward slashes." };
  }
  if (/end of central directory/i.test(text)) {
    return { message: "the file is not a ZIP archive", hint: "A .skill file is a ZIP of the skill folder (SKILL.md at its root)." };
  }
  if (/size mismatch|too many bytes|not enough bytes|invalid stored block/i.test(text)) {
    return { message: `an entry's size does not match its header (${text})`, hint: "Re-create the archive; it is corrupt or crafted." };
  }
  return { message: `the archive cannot be read: ${text}`, hint: "Re-create the archive with a standard zip tool." };
}

async function openZip(bytes: Buffer): Promise<ZipFile> {
  const yauzl = await import("yauzl");
  return new Promise((resolvePromise, reject) => {
    yauzl.fromBuffer(
      bytes,
      { lazyEntries: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: true, autoClose: true },
      (err, zip) => (err || !zip ? reject(err ?? new Error("no zip file")) : resolvePromise(zip)),
    );
  });
}

function readEntry(zip: ZipFile, entry: Entry, maxBytes: number): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    zip.openReadStream(entry, (err, stream?: Readable) => {
      if (err || !stream) return reject(err ?? new Error("no stream"));
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        // The declared size was checked already; this catches a header that lies about it.
        if (size > maxBytes) {
          stream.destroy(new Error(`too many bytes in the stream: more than ${maxBytes}`));
          return;
        }
        chunks.push(chunk);
      });
      stream.on("error", reject);
      stream.on("end", () => resolvePromise(Buffer.concat(chunks)));
    });
  });
}

/**
 * Reads and validates a whole `.skill` archive in memory, writing nothing. Refused (ANTLER_ERR_SKILL_ARCHIVE_REFUSED):
 * bytes that are not a ZIP, entries that escape (`..`, absolute paths, backslashes), symbolic links and other
 * non-regular entries, encrypted entries, duplicate names, an entry or a total over the limits, too many entries, no
 * SKILL.md at the root (or in one top folder), an invalid SKILL.md, and a folder name that differs from the skill's.
 */
export async function validateSkillArchive(input: Uint8Array, limits: SkillInstallLimits): Promise<ValidatedSkillArchive> {
  if (input.byteLength > limits.max_archive_bytes) {
    throw refuse(
      `the archive is ${input.byteLength} bytes, over the ${limits.max_archive_bytes}-byte limit`,
      "Make the skill smaller, or raise skills.install.max_archive_bytes.",
    );
  }
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (bytes.length < 4 || bytes.readUInt32LE(0) !== 0x04034b50) {
    const empty = bytes.length >= 4 && bytes.readUInt32LE(0) === 0x06054b50;
    throw refuse(
      empty ? "the archive is empty" : "the file is not a ZIP archive",
      "A .skill file is a ZIP of the skill folder, with SKILL.md at its root.",
    );
  }
  let zip: ZipFile;
  try {
    zip = await openZip(bytes);
  } catch (err) {
    const { message, hint } = describeYauzlError(err as Error);
    throw refuse(message, hint);
  }
  if (zip.entryCount > limits.max_entries) {
    zip.close();
    throw refuse(
      `the archive has ${zip.entryCount} entries, over the limit of ${limits.max_entries}`,
      "Remove files the skill does not need, or raise skills.install.max_entries.",
    );
  }
  const files = new Map<string, Buffer>();
  const folders = new Set<string>();
  let total = 0;
  try {
    await new Promise<void>((resolvePromise, reject) => {
      const fail = (err: unknown) => {
        zip.close();
        reject(err);
      };
      zip.on("error", (err: Error) => {
        const { message, hint } = describeYauzlError(err);
        fail(refuse(message, hint));
      });
      zip.on("end", () => resolvePromise());
      zip.on("entry", (entry: Entry) => {
        void (async () => {
          const name = entry.fileName;
          const problem = entryNameProblem(name);
          if (problem) throw refuse(`entry ${JSON.stringify(name)} has ${problem}`, "Zip only the skill folder's own files.");
          const isFolder = name.endsWith("/");
          const key = name.replace(/\/$/, "");
          const madeBy = (entry.versionMadeBy >> 8) & 0xff;
          const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
          const type = mode & S_IFMT;
          if (UNIX_HOSTS.has(madeBy) && type !== 0) {
            if (type === S_IFLNK) {
              throw refuse(`entry ${JSON.stringify(name)} is a symbolic link`, "Replace links with the files they point to.");
            }
            if (type !== S_IFREG && type !== S_IFDIR) {
              throw refuse(`entry ${JSON.stringify(name)} is not a regular file or folder`, "Zip only regular files.");
            }
            if ((type === S_IFDIR) !== isFolder) {
              throw refuse(`entry ${JSON.stringify(name)} has a type that contradicts its name`, "Re-create the archive.");
            }
          }
          if (entry.isEncrypted()) throw refuse(`entry ${JSON.stringify(name)} is encrypted`, "Zip the skill without a password.");
          if (files.has(key) || folders.has(key)) {
            throw refuse(`the archive has two entries named ${JSON.stringify(key)}`, "Re-create the archive; each path may appear once.");
          }
          if (isFolder) {
            folders.add(key);
            zip.readEntry();
            return;
          }
          if (entry.uncompressedSize > limits.max_entry_bytes) {
            throw refuse(
              `entry ${JSON.stringify(name)} is ${entry.uncompressedSize} bytes, over the ${limits.max_entry_bytes}-byte limit per file`,
              "Make the file smaller, or raise skills.install.max_entry_bytes.",
            );
          }
          total += entry.uncompressedSize;
          if (total > limits.max_total_bytes) {
            throw refuse(
              `the archive unpacks to more than ${limits.max_total_bytes} bytes`,
              "Make the skill smaller, or raise skills.install.max_total_bytes.",
            );
          }
          let content: Buffer;
          try {
            content = await readEntry(zip, entry, Math.min(limits.max_entry_bytes, entry.uncompressedSize));
          } catch (err) {
            const { message, hint } = describeYauzlError(err as Error);
            throw refuse(`entry ${JSON.stringify(name)}: ${message}`, hint);
          }
          files.set(key, content);
          zip.readEntry();
        })().catch(fail);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }

  // A file may not also be a folder (`a` and `a/b`): extraction would have to pick one.
  for (const path of files.keys()) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join("/");
      if (files.has(parent)) {
        throw refuse(
          `entry ${JSON.stringify(path)} sits below the file ${JSON.stringify(parent)}`,
          "Re-create the archive from a real folder.",
        );
      }
      folders.add(parent);
    }
  }

  // SKILL.md at the root, or the archive is one top folder holding SKILL.md (what zipping a folder gives).
  let prefix = "";
  if (!files.has("SKILL.md")) {
    const tops = new Set([...files.keys(), ...folders].map((p) => p.split("/")[0] as string));
    const top = tops.size === 1 ? ([...tops][0] as string) : undefined;
    if (!top || !files.has(`${top}/SKILL.md`)) {
      const nested = [...files.keys()].find((p) => p.endsWith("/SKILL.md") || p === "SKILL.md");
      throw refuse(
        nested
          ? `SKILL.md is at ${JSON.stringify(nested)}, not at the archive's root or in its single top folder`
          : "the archive has no SKILL.md",
        "Zip the skill folder itself: SKILL.md must be at the root (or in the one folder the archive holds).",
      );
    }
    prefix = `${top}/`;
  }
  const skillMd = files.get(`${prefix}SKILL.md`) as Buffer;
  const { manifest } = parseSkillFile(skillMd.toString("utf8"), `${prefix}SKILL.md`);
  if (prefix && prefix.slice(0, -1) !== manifest.name) {
    throw refuse(
      `the archive's folder is "${prefix.slice(0, -1)}" but SKILL.md names the skill "${manifest.name}"`,
      "Name the folder after the skill's frontmatter name.",
    );
  }
  const strip = (p: string) => p.slice(prefix.length);
  return {
    name: manifest.name,
    files: [...files].map(([path, content]) => ({ path: strip(path), bytes: content })),
    folders: [...folders].filter((f) => f.length > prefix.length - 1 && f !== prefix.slice(0, -1)).map(strip),
  };
}

/**
 * Validates the archive completely, then writes it into a fresh staging folder beside `custom/` and renames that
 * into place, so a refused archive writes nothing and an accepted one appears whole or not at all.
 */
export async function installSkillArchive(
  catalog: SkillCatalog,
  userId: string,
  input: Uint8Array,
  limits: SkillInstallLimits,
): Promise<SkillRecord> {
  let archive: ValidatedSkillArchive;
  try {
    archive = await validateSkillArchive(input, limits);
  } catch (err) {
    if ((err as { code?: string }).code === SkillErrorCodes.INVALID) {
      throw refuse(`SKILL.md is invalid: ${(err as Error).message.split("\n")[0]}`, (err as { hint?: string }).hint ?? "Fix SKILL.md.");
    }
    throw err;
  }
  const problem = skillNameProblem(archive.name);
  if (problem) throw refuse(`"${archive.name}" cannot name a skill: ${problem}`, "Rename the skill.");
  const existing = catalog.view(userId).get(archive.name);
  if (existing) {
    throw skillError(SkillErrorCodes.EXISTS, `a ${existing.category} skill named "${archive.name}" already exists`, {
      where: existing.location,
      hint:
        existing.category === "custom"
          ? `Remove it first (antler skills rm ${archive.name}), then install again.`
          : "Public skills ship with the distribution; give yours another name.",
    });
  }
  const dirs = catalog.userDirs(userId);
  const target = join(dirs.custom, archive.name);
  if (statSync(target, { throwIfNoEntry: false })) {
    throw skillError(SkillErrorCodes.EXISTS, `the folder of custom skill "${archive.name}" already exists`, {
      where: `/mnt/skills/custom/${archive.name}`,
      hint: `Remove it first (antler skills rm ${archive.name}).`,
    });
  }
  mkdirSync(dirs.custom, { recursive: true });
  const staging = join(dirs.root, `.staging-${randomUUID()}`);
  try {
    mkdirSync(staging, { mode: 0o755 });
    for (const folder of archive.folders.sort()) mkdirSync(join(staging, folder), { recursive: true, mode: 0o755 });
    for (const file of archive.files) {
      mkdirSync(dirname(join(staging, file.path)), { recursive: true, mode: 0o755 });
      // `wx`: a fresh folder holds nothing to follow or overwrite; this refuses it all the same.
      writeFileSync(join(staging, file.path), file.bytes, { flag: "wx", mode: 0o644 });
    }
    renameSync(staging, target);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  catalog.changed(userId);
  return catalog.require(userId, archive.name);
}

/** Removes a user's custom skill (public skills ship with the distribution and cannot be removed). */
export function removeCustomSkill(catalog: SkillCatalog, userId: string, name: string): SkillRecord {
  const skill = catalog.require(userId, name);
  if (skill.category !== "custom") {
    throw skillError(SkillErrorCodes.FORBIDDEN, `"${name}" is a public skill and cannot be removed`, {
      where: skill.location,
      hint: `Disable it instead: antler skills disable ${name}.`,
    });
  }
  const dirs = catalog.userDirs(userId);
  // Renamed away first, so a half-removed folder is never seen as a skill.
  const trash = join(dirs.root, `.removing-${randomUUID()}`);
  renameSync(skill.hostDir, trash);
  rmSync(trash, { recursive: true, force: true });
  catalog.changed(userId);
  return skill;
}
