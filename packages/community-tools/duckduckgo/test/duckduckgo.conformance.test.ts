import { runWebToolConformance } from "@antler/tools-web/testing";
import duckduckgoToolsPlugin from "../src/index.js";

const esc = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

runWebToolConformance({
  provider: "duckduckgo",
  plugins: (serverUrl) => [{ plugin: duckduckgoToolsPlugin, config: { base_url: serverUrl } }],
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
    error: (status) => `<html><body><h1>${status}</h1></body></html>`,
  },
});
