import { runWebToolConformance } from "@antler/tools-web/testing";
import duckduckgoToolsPlugin from "../src/index.js";

const VQD = "4-108263985217462519308471253960472851903";

const esc = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

runWebToolConformance({
  provider: "duckduckgo",
  // One loopback server stands in for both html.duckduckgo.com (search) and duckduckgo.com (images).
  plugins: (serverUrl) => [{ plugin: duckduckgoToolsPlugin, config: { base_url: serverUrl, images_base_url: serverUrl } }],
  vendor: {
    search(results, request) {
      const form = new URLSearchParams(request.text);
      if (request.method !== "POST" || request.path !== "/html/" || !form.get("q")) return { status: 400, body: "Bad Request" };
      const blocks = results.map((r) => {
        const href = `//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=conformance`;
        return `<div class="result results_links results_links_deep web-result"><div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="${href}">${esc(r.title)}</a></h2>
<div class="result__extras"><div class="result__extras__url"><a class="result__url" href="${href}">${esc(new URL(r.url).hostname)}</a></div></div>
<a class="result__snippet" href="${href}">${esc(r.snippet)}</a><div class="clear"></div></div></div>`;
      });
      return {
        status: 200,
        headers: { "content-type": "text/html; charset=UTF-8" },
        body: `<!DOCTYPE html><html><head><title>${esc(form.get("q") ?? "")} at DuckDuckGo</title></head><body><div id="links" class="results">${blocks.join("\n")}</div></body></html>`,
      };
    },
    images(images, request) {
      const q = request.query.get("q");
      if (request.method !== "GET" || !q) return { status: 400, body: "Bad Request" };
      // First the image results page, which carries the query's vqd token...
      if (request.path === "/" && request.query.get("ia") === "images") {
        return {
          status: 200,
          headers: { "content-type": "text/html; charset=UTF-8" },
          body: `<!DOCTYPE html><html><head><title>${esc(q)} at DuckDuckGo</title><script>vqd="${VQD}";</script></head><body></body></html>`,
        };
      }
      // ...then i.js, which answers only with that token (DuckDuckGo answers 403 without it).
      if (request.path !== "/i.js" || request.query.get("vqd") !== VQD || request.query.get("o") !== "json") {
        return { status: 403, body: "Forbidden" };
      }
      return {
        status: 200,
        body: {
          ads: null,
          query: q,
          response_type: "places",
          results: images.map((i) => ({
            title: i.title,
            image: i.imageUrl,
            thumbnail: i.thumbnailUrl,
            url: i.sourceUrl,
            width: i.width,
            height: i.height,
            source: "Bing",
          })),
        },
      };
    },
    error: (status) => `<html><body><h1>${status}</h1></body></html>`,
  },
});
