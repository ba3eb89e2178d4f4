/**
 * `.skill` archives for the install tests: one good one and a table of malicious or broken ones. They are made
 * with fflate (a real ZIP writer); the few shapes a writer will not produce (two entries with one name, a header
 * that lies about a size) are made by patching bytes of a valid archive, so the rest of the file stays well formed.
 */
import { strToU8, type Zippable, zipSync } from "fflate";

export const GOOD_SKILL_MD = `---
name: tidy-notes
description: Turn rough meeting notes into a tidy summary with decisions and action items.
allowed-tools: [read_file, write_file]
---

# Tidy notes

1. Read the notes.
2. Write decisions first, then action items with owners.
`;

export function skillMd(name: string, extra = ""): string {
  return `---\nname: ${name}\ndescription: A test skill called ${name}.\n${extra}---\n\nBody of ${name}.\n`;
}

function zip(files: Zippable): Buffer {
  return Buffer.from(zipSync(files, { level: 6 }));
}

/** Replaces every occurrence of `from` (same length) in the archive's bytes: local headers and central directory. */
function patchName(archive: Buffer, from: string, to: string): Buffer {
  if (from.length !== to.length) throw new Error("patched names must keep their length");
  const out = Buffer.from(archive);
  const needle = Buffer.from(from, "latin1");
  let at = out.indexOf(needle);
  let count = 0;
  while (at !== -1) {
    Buffer.from(to, "latin1").copy(out, at);
    count++;
    at = out.indexOf(needle, at + needle.length);
  }
  if (count === 0) throw new Error(`"${from}" not found in the archive`);
  return out;
}

/** Sets the uncompressed size recorded for `name` in the local header and central directory. */
function patchUncompressedSize(archive: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(archive);
  const nameBytes = Buffer.from(name, "latin1");
  for (let i = 0; i < out.length - 4; i++) {
    const sig = out.readUInt32LE(i);
    if (sig === 0x04034b50 && out.subarray(i + 30, i + 30 + nameBytes.length).equals(nameBytes)) out.writeUInt32LE(size, i + 22);
    if (sig === 0x02014b50 && out.subarray(i + 46, i + 46 + nameBytes.length).equals(nameBytes)) out.writeUInt32LE(size, i + 24);
  }
  return out;
}

export const goodArchive = () =>
  zip({ "tidy-notes": { "SKILL.md": strToU8(GOOD_SKILL_MD), templates: { "summary.md": strToU8("# Summary\n") } } });

/** Limits the tests configure (`skills.install`), small so the oversize cases stay small. */
export const TEST_LIMITS = { max_archive_bytes: 256 * 1024, max_entry_bytes: 64 * 1024, max_total_bytes: 160 * 1024, max_entries: 20 };

export interface BadArchive {
  case: string;
  bytes: Buffer;
  /** What the error message must say. */
  message: RegExp;
}

const evil = strToU8("pwned\n");

export function badArchives(): BadArchive[] {
  const big = new Uint8Array(70 * 1024).fill(0x61);
  const chunk = new Uint8Array(60 * 1024).fill(0x62);
  const many: Zippable = { "SKILL.md": strToU8(skillMd("many")) };
  for (let i = 0; i < 25; i++) many[`f${i}.txt`] = strToU8(String(i));
  const symlink: Zippable = {
    "SKILL.md": strToU8(skillMd("linky")),
    passwd: [strToU8("/etc/passwd"), { os: 3, attrs: (0o120777 << 16) >>> 0 }],
  };
  return [
    {
      case: "zip-slip ../ entry",
      bytes: zip({ "SKILL.md": strToU8(skillMd("slip")), "../evil.txt": evil }),
      message: /escapes the skill folder|zip-slip/,
    },
    {
      case: "zip-slip through a subfolder",
      bytes: zip({ "SKILL.md": strToU8(skillMd("slip2")), "docs/../../evil.txt": evil }),
      message: /escapes the skill folder|zip-slip/,
    },
    { case: "absolute path entry", bytes: zip({ "SKILL.md": strToU8(skillMd("abs")), "/tmp/evil.txt": evil }), message: /absolute path/ },
    {
      case: "backslash path entry",
      bytes: patchName(zip({ "SKILL.md": strToU8(skillMd("bs")), "xx/evil.txt": evil }), "xx/evil.txt", "..\\evil.txt"),
      message: /backslash/,
    },
    { case: "symbolic link entry", bytes: zip(symlink), message: /symbolic link/ },
    {
      case: "oversize entry",
      bytes: zip({ "SKILL.md": strToU8(skillMd("fat")), "big.bin": big }),
      message: /over the 65536-byte limit per file/,
    },
    {
      case: "oversize total",
      bytes: zip({ "SKILL.md": strToU8(skillMd("fat2")), "a.bin": chunk, "b.bin": chunk, "c.bin": chunk }),
      message: /unpacks to more than 163840 bytes/,
    },
    {
      case: "header lies about a size (zip bomb)",
      bytes: patchUncompressedSize(zip({ "SKILL.md": strToU8(skillMd("bomb")), "bomb.bin": chunk }), "bomb.bin", 10),
      message: /size does not match|too many bytes/,
    },
    { case: "too many entries", bytes: zip(many), message: /26 entries, over the limit of 20/ },
    { case: "missing SKILL.md", bytes: zip({ "README.md": strToU8("# no skill here\n") }), message: /has no SKILL\.md/ },
    {
      case: "SKILL.md without frontmatter",
      bytes: zip({ "SKILL.md": strToU8("# Just a heading\n") }),
      message: /does not start with a YAML frontmatter/,
    },
    {
      case: "unknown frontmatter key",
      bytes: zip({ "SKILL.md": strToU8("---\nname: typo\ndescription: d\nallowed-tool: [bash]\n---\nbody\n") }),
      message: /unknown frontmatter key "allowed-tool" \(did you mean "allowed-tools"\?\)/,
    },
    {
      case: "frontmatter that is not YAML",
      bytes: zip({ "SKILL.md": strToU8("---\nname: [unclosed\ndescription: d\n---\nbody\n") }),
      message: /not valid YAML/,
    },
    {
      case: "folder name differs from the skill's name",
      bytes: zip({ "other-name": { "SKILL.md": strToU8(skillMd("real-name")) } }),
      message: /folder is "other-name" but SKILL.md names the skill "real-name"/,
    },
    { case: "invalid skill name", bytes: zip({ "SKILL.md": strToU8(skillMd("Bad_Name")) }), message: /not a valid skill name/ },
    { case: "reserved skill name", bytes: zip({ "SKILL.md": strToU8(skillMd("help")) }), message: /reserved slash command/ },
    {
      case: "nested SKILL.md only",
      bytes: zip({ a: { b: { "SKILL.md": strToU8(skillMd("b")) } } }),
      message: /SKILL\.md is at "a\/b\/SKILL\.md"/,
    },
    {
      case: "duplicate entry names",
      bytes: patchName(zip({ "SKILL.md": strToU8(skillMd("dup")), "XKILL.md": strToU8(skillMd("dup")) }), "XKILL.md", "SKILL.md"),
      message: /two entries named "SKILL\.md"/,
    },
    { case: "bytes that are not a ZIP", bytes: Buffer.from("this is not a zip archive at all\n"), message: /not a ZIP archive/ },
    { case: "empty ZIP", bytes: zip({}), message: /archive is empty/ },
  ];
}
