import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, gzipSync, constants as zlib } from "node:zlib";
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
// What the page itself may do: only its own origin; images, PDFs and downloads of artifacts come in as blob: URLs,
// and HTML artifacts are framed from the console's own sandboxed route.
// Inline scripts of the shell (the theme set before the first paint) are allowed by their hashes, nothing else inline.
const pageCsp = (scriptHashes: readonly string[]) =>
  `default-src 'self'; script-src 'self'${scriptHashes.map((h) => ` '${h}'`).join("")}; style-src 'self' 'unsafe-inline'; img-src 'self' blob: data:; connect-src 'self'; font-src 'self'; frame-src 'self' blob:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

const brotli = promisify(brotliCompress);

interface StaticFile {
  readonly bytes: Buffer;
  readonly gzip: Buffer | null;
  /** Brotli at its best quality, made once when the file is first read (off the event loop), like the gzip copy. */
  readonly br: Buffer | null;
  readonly type: string;
  readonly etag: string;
}

interface Build {
  readonly shell: StaticFile;
  /** The shell's Content-Security-Policy, with the hash of each inline script it has. */
  readonly csp: string;
  /** The names in `assets/` when the shell was found: the only keys the asset cache ever holds. */
  readonly assets: ReadonlySet<string>;
}

/**
 * Serves the built console from a folder: `index.html` for the shell and every client-side route, `assets/<name>`
 * for the hashed bundles. The shell and the list of asset names are read once, together, on first use; an asset is
 * read on its first request and kept (a build never changes while the server runs). A name the build does not
 * have is a 404 that touches neither the disk nor the cache, so requests for made-up names cost no memory.
 */
export class StaticSite {
  private build: Promise<Build | null> | undefined;
  private readonly assets = new Map<string, Promise<StaticFile | null>>();

  constructor(private readonly dir: string) {}

  /** The shell: for `/` and the client-side routes (SPA fallback). */
  async shell(request: Request): Promise<Response> {
    const build = await this.loadBuild();
    if (!build) {
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
    return respond(request, build.shell, REVALIDATE, build.csp);
  }

  /** One built asset; anything but a file name the build has is a 404, so no path can leave the assets folder. */
  async asset(request: Request): Promise<Response> {
    const pathname = new URL(request.url).pathname;
    let name: string;
    try {
      name = decodeURIComponent(pathname.slice("/assets/".length));
    } catch {
      name = "";
    }
    if (!ASSET_NAME.test(name) || name.includes("..")) return notFound(pathname);
    const build = await this.loadBuild();
    if (!build?.assets.has(name)) return notFound(pathname);
    const file = await this.loadAsset(name);
    return file ? respond(request, file, IMMUTABLE, null) : notFound(pathname);
  }

  /** How many asset files are held in memory (at most the build's count). */
  get cachedAssetCount(): number {
    return this.assets.size;
  }

  private loadBuild(): Promise<Build | null> {
    if (!this.build) {
      const loading = Promise.all([readStatic(join(this.dir, "index.html")), listAssets(join(this.dir, "assets"))]).then(
        ([shell, assets]) => (shell ? { shell, assets, csp: pageCsp(inlineScriptHashes(shell.bytes.toString("utf8"))) } : null),
      );
      // A missing shell is looked for again next time (the build may land while the server runs).
      void loading.then((build) => {
        if (!build && this.build === loading) this.build = undefined;
      });
      this.build = loading;
    }
    return this.build;
  }

  private loadAsset(name: string): Promise<StaticFile | null> {
    let entry = this.assets.get(name);
    if (!entry) {
      const loading = readStatic(join(this.dir, "assets", name));
      // A listed file that could not be read is tried again next time; the keys stay within the listing either way.
      void loading.then((file) => {
        if (!file && this.assets.get(name) === loading) this.assets.delete(name);
      });
      entry = loading;
      this.assets.set(name, entry);
    }
    return entry;
  }
}

/** `sha256-…` of each inline `<script>` (no src) in the HTML, as CSP hash sources. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `sha256-${createHash("sha256")
        .update(m[1] ?? "")
        .digest("base64")}`,
  );
}

/** `csp` is the shell's policy (null for an asset). */
function respond(request: Request, file: StaticFile, cacheControl: string, csp: string | null): Response {
  const headers: Record<string, string> = {
    "content-type": file.type,
    "cache-control": cacheControl,
    etag: file.etag,
    "x-content-type-options": "nosniff",
    vary: "accept-encoding",
  };
  if (csp !== null) {
    headers["content-security-policy"] = csp;
    headers["referrer-policy"] = "no-referrer";
  }
  const match = request.headers.get("if-none-match");
  if (match?.split(",").some((tag) => tag.trim() === file.etag)) return new Response(null, { status: 304, headers });
  const accepted = acceptedEncodings(request.headers.get("accept-encoding"));
  let body = file.bytes;
  if (file.br !== null && accepted.has("br")) {
    body = file.br;
    headers["content-encoding"] = "br";
  } else if (file.gzip !== null && accepted.has("gzip")) {
    body = file.gzip;
    headers["content-encoding"] = "gzip";
  }
  headers["content-length"] = String(body.length);
  return new Response(request.method === "HEAD" ? null : new Uint8Array(body), { status: 200, headers });
}

async function readStatic(path: string): Promise<StaticFile | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    return null;
  }
  const ext = extname(path);
  const compress = COMPRESSIBLE.has(ext) && bytes.length > 512;
  const br = compress
    ? await brotli(bytes, {
        params: {
          [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
          [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
          [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        },
      })
    : null;
  return {
    bytes,
    gzip: compress ? gzipSync(bytes) : null,
    br,
    type: TYPES[ext] ?? "application/octet-stream",
    etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`,
  };
}

/** The content codings `Accept-Encoding` allows (`q=0` refuses one). */
function acceptedEncodings(header: string | null): Set<string> {
  const accepted = new Set<string>();
  for (const part of (header ?? "").split(",")) {
    const [coding = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (coding && (q === undefined || Number(q) > 0)) accepted.add(coding.trim());
  }
  return accepted;
}

/** The plain files directly in the build's assets folder whose names the route accepts (none when it is missing). */
async function listAssets(dir: string): Promise<ReadonlySet<string>> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return new Set(entries.filter((e) => e.isFile() && ASSET_NAME.test(e.name)).map((e) => e.name));
  } catch {
    return new Set();
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
