import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { ConsoleErrorCodes } from "./config.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".ico": "image/x-icon",
  ".map": "application/json",
};
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".map"]);
// Built asset names carry a content hash, so a name never changes meaning: cache it for a year.
const IMMUTABLE = "public, max-age=31536000, immutable";
// The shell names the current hashes: revalidate it every time (cheap: an ETag match is a 304).
const REVALIDATE = "no-cache";
// What the page itself may do: only its own origin; images and downloads of artifacts come in as blob: URLs.
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' blob: data:; connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

interface StaticFile {
  readonly bytes: Buffer;
  readonly gzip: Buffer | null;
  readonly type: string;
  readonly etag: string;
}

/**
 * Serves the built console from a folder: `index.html` for the shell and every client-side route, `assets/<name>`
 * for the hashed bundles. Files are read on first use and kept (they never change while the server runs).
 */
export class StaticSite {
  private readonly files = new Map<string, Promise<StaticFile | null>>();

  constructor(private readonly dir: string) {}

  /** The shell: for `/` and the client-side routes (SPA fallback). */
  shell(request: Request): Promise<Response> {
    return this.respond(request, "index.html", REVALIDATE, true);
  }

  /** One built asset; anything but a plain file name is a 404, so no path can leave the assets folder. */
  asset(request: Request): Promise<Response> {
    const pathname = new URL(request.url).pathname;
    let name: string;
    try {
      name = decodeURIComponent(pathname.slice("/assets/".length));
    } catch {
      name = "";
    }
    if (!ASSET_NAME.test(name) || name.includes("..")) return Promise.resolve(notFound(pathname));
    return this.respond(request, `assets/${name}`, IMMUTABLE, false);
  }

  private async respond(request: Request, relative: string, cacheControl: string, isShell: boolean): Promise<Response> {
    const file = await this.load(relative);
    if (!file) {
      if (!isShell) return notFound(new URL(request.url).pathname);
      return new Response(
        JSON.stringify({
          error: {
            code: ConsoleErrorCodes.NOT_BUILT,
            message: `the console is not built: there is no index.html in ${this.dir}`,
            hint: "Run `pnpm run build` in the Antler checkout (it builds the console into packages/plugins/console/dist/web), or point the console plugin's static_dir at a built copy.",
          },
        }),
        { status: 503, headers: { "content-type": "application/json", "cache-control": "no-store" } },
      );
    }
    const headers: Record<string, string> = {
      "content-type": file.type,
      "cache-control": cacheControl,
      etag: file.etag,
      "x-content-type-options": "nosniff",
      vary: "accept-encoding",
    };
    if (isShell) {
      headers["content-security-policy"] = PAGE_CSP;
      headers["referrer-policy"] = "no-referrer";
    }
    const match = request.headers.get("if-none-match");
    if (match?.split(",").some((tag) => tag.trim() === file.etag)) return new Response(null, { status: 304, headers });
    const gzip = file.gzip !== null && /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
    const body = gzip ? (file.gzip as Buffer) : file.bytes;
    if (gzip) headers["content-encoding"] = "gzip";
    headers["content-length"] = String(body.length);
    return new Response(request.method === "HEAD" ? null : new Uint8Array(body), { status: 200, headers });
  }

  private load(relative: string): Promise<StaticFile | null> {
    let entry = this.files.get(relative);
    if (!entry) {
      entry = readFile(join(this.dir, relative)).then(
        (bytes) => {
          const ext = extname(relative);
          return {
            bytes,
            gzip: COMPRESSIBLE.has(ext) && bytes.length > 512 ? gzipSync(bytes) : null,
            type: TYPES[ext] ?? "application/octet-stream",
            etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`,
          };
        },
        () => null,
      );
      // A missing shell is looked for again next time (the build may land while the server runs).
      if (relative === "index.html") void entry.then((file) => file ?? this.files.delete(relative));
      this.files.set(relative, entry);
    }
    return entry;
  }
}

function notFound(pathname: string): Response {
  return new Response(
    JSON.stringify({
      error: {
        code: "ANTLER_ERR_GATEWAY_NOT_FOUND",
        message: `no console file at ${pathname}`,
        hint: "Reload the console: its assets change with each build.",
      },
    }),
    { status: 404, headers: { "content-type": "application/json", "cache-control": "no-store" } },
  );
}
