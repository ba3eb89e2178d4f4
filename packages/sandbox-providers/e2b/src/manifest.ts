import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";

/** File name of the sync manifest, kept in the thread folder next to `user-data/`. */
export const SYNC_MANIFEST_FILE = ".e2b-sync.json";

const remoteVersionSchema = z.strictObject({
  size: z.number().int().nonnegative(),
  /** As the remote listing reports it; `null` when the listing has none. */
  mtimeMs: z.number().nullable(),
});

const hostMetaSchema = z.strictObject({
  size: z.number().int().nonnegative(),
  /** The host file's mtime as the host filesystem stored it (after any rounding). */
  mtimeMs: z.number(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

const manifestEntrySchema = z.strictObject({
  remote: remoteVersionSchema,
  host: hostMetaSchema,
  /** True when the sync created the host file; only such copies are deleted when the remote file goes. */
  created: z.boolean(),
});

export const syncManifestSchema = z.strictObject({
  version: z.literal(1),
  sandboxId: z.string().min(1),
  /** Keyed by path relative to the outputs folder, `/`-separated. */
  files: z.record(z.string(), manifestEntrySchema),
});

export type SyncManifest = z.output<typeof syncManifestSchema>;
export type SyncManifestEntry = z.output<typeof manifestEntrySchema>;
export type RemoteVersion = z.output<typeof remoteVersionSchema>;
export type HostMeta = z.output<typeof hostMetaSchema>;

export type ManifestLoad =
  | { status: "ok"; manifest: SyncManifest }
  | { status: "missing" }
  | { status: "other_sandbox"; sandboxId: string }
  | { status: "invalid"; reason: string };

/** Reads the manifest for `sandboxId`. A manifest bound to another sandbox describes files that no longer exist remotely. */
export async function loadManifest(path: string, sandboxId: string): Promise<ManifestLoad> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { status: "missing" };
    return { status: "invalid", reason: (err as Error).message };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { status: "invalid", reason: `not JSON: ${(err as Error).message}` };
  }
  const parsed = syncManifestSchema.safeParse(raw);
  if (!parsed.success) return { status: "invalid", reason: parsed.error.issues.map((i) => i.message).join("; ") };
  if (parsed.data.sandboxId !== sandboxId) return { status: "other_sandbox", sandboxId: parsed.data.sandboxId };
  return { status: "ok", manifest: parsed.data };
}

/** Writes through a temporary file and a rename, so a crash never leaves half a manifest. */
export async function saveManifest(path: string, manifest: SyncManifest): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${randomUUID().slice(0, 8)}.tmp`);
  try {
    await writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
