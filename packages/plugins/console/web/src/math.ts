// Loaded on demand by MathTex: KaTeX is large, and most screens show no math.
import katex from "katex";

/**
 * TeX as MathML, which Chromium, Firefox and Safari draw natively: no KaTeX stylesheet and no web fonts (the
 * console loads none). `trust: false` refuses `\href`, `\url`, `\includegraphics` and raw HTML; a TeX error shows
 * the source in the error colour instead of throwing.
 */
export function texToMathml(tex: string, display: boolean): string {
  return katex.renderToString(tex, {
    displayMode: display,
    output: "mathml",
    throwOnError: false,
    trust: false,
    strict: "ignore",
    maxSize: 20,
    maxExpand: 500,
  });
}
