// A small web page on loopback for the demo's web_fetch step: a real HTTP server, so the fetch goes through
// @antler/tools-web's real path (guarded fetch, redirects, readable-text extraction). The port is fixed because
// the cassette replays the model's tool call, URL included.
import { createServer } from "node:http";

export const NOTES_SITE_PORT = 47115;
// /guide redirects to /field-guide, so the fetch also shows the redirect hop being re-checked.
export const NOTES_SITE_URL = `http://127.0.0.1:${NOTES_SITE_PORT}/guide`;

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Field guide: shipping agent tools safely</title></head>
<body>
  <nav><a href="/">Home</a> · <a href="/archive">Archive</a> · <a href="/about">About</a></nav>
  <main>
    <article>
      <h1>Field guide: shipping agent tools safely</h1>
      <p>Every tool an agent can call is an entry point. Three habits keep them safe in production.</p>
      <h2>Screen every URL</h2>
      <p>Resolve the host first and refuse loopback, private, link-local and cloud-metadata addresses.
      Check again on every redirect, because the first hop is rarely the one that hurts.</p>
      <h2>Confine file access</h2>
      <p>Map virtual paths onto one folder per thread, and refuse <code>..</code>, absolute paths and symlinks that leave it.</p>
      <h2>Treat fetched text as data</h2>
      <p>Pages can carry instructions aimed at the model. Neutralize markup that imitates the framework before
      the text reaches the context.</p>
    </article>
  </main>
  <footer>© 2026 Harness Notes · <a href="/rss">RSS</a></footer>
</body>
</html>
`;

/** Serves the field guide (and a redirect to it) on 127.0.0.1:47115 until `close()`. */
export async function startNotesSite() {
  const server = createServer((req, res) => {
    if (req.url === "/guide") {
      res.writeHead(301, { location: "/field-guide" }).end();
    } else if (req.url === "/field-guide") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`the demo's web page needs 127.0.0.1:${NOTES_SITE_PORT}, which is in use; stop whatever holds it and retry`)
          : error,
      ),
    );
    server.listen(NOTES_SITE_PORT, "127.0.0.1", resolve);
  });
  return { close: () => new Promise((resolve) => server.close(() => resolve())) };
}
