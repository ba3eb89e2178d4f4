import { createHash } from "node:crypto";
import { readFileSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";

/** Identity of a file's content at one moment: consumers compare two of them to know it went stale. */
export interface ContentSignature {
  readonly path: string;
  readonly mtimeMs: number;
  readonly size: number;
  readonly sha256: string;
}

/** The signature of the file at `path` (resolved through symlinks), or `null` if it does not exist. */
export function contentSignature(path: string): ContentSignature | null {
  let resolved: string;
  try {
    resolved = realpathSync(resolve(path));
  } catch {
    return null;
  }
  const stat = statSync(resolved);
  const sha256 = createHash("sha256").update(readFileSync(resolved)).digest("hex");
  return Object.freeze({ path: resolved, mtimeMs: stat.mtimeMs, size: stat.size, sha256 });
}

export function sameSignature(a: ContentSignature | null, b: ContentSignature | null): boolean {
  if (a === null || b === null) return a === b;
  return a.path === b.path && a.mtimeMs === b.mtimeMs && a.size === b.size && a.sha256 === b.sha256;
}

/**
 * Whether `path` no longer matches `previous`: a different resolved path, mtime, size or content.
 * The hash is compared even when mtime and size agree, because coarse file-system clocks let an edit
 * keep both.
 */
export function isStale(previous: ContentSignature | null, path: string): boolean {
  return !sameSignature(previous, contentSignature(path));
}

/** Caches one value derived from a file and rebuilds it only when the file's signature changes. */
export class SignatureCache<T> {
  private entry: { signature: ContentSignature | null; requestedPath: string; value: T } | undefined;
  private loads = 0;

  constructor(private readonly load: (path: string, signature: ContentSignature | null) => T) {}

  get(path: string): T {
    const signature = contentSignature(path);
    if (this.entry && this.entry.requestedPath === resolve(path) && sameSignature(this.entry.signature, signature)) {
      return this.entry.value;
    }
    this.loads += 1;
    const value = this.load(path, signature);
    this.entry = { signature, requestedPath: resolve(path), value };
    return value;
  }

  /** Drops the cached value; the next `get` reloads. */
  reset(): void {
    this.entry = undefined;
  }

  /** How many times the loader ran; useful in tests and status output. */
  get loadCount(): number {
    return this.loads;
  }
}
