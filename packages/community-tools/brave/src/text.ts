const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  laquo: "«",
  raquo: "»",
  copy: "©",
  reg: "®",
};

function codePoint(value: number, original: string): string {
  return Number.isInteger(value) && value > 0 && value <= 0x10ffff ? String.fromCodePoint(value) : original;
}

/**
 * Brave's titles and descriptions are HTML fragments: `<strong>` around query terms and entities such as
 * `&#x27;`. The model gets plain text: tags dropped, entities decoded, whitespace collapsed.
 */
export function htmlFragmentToText(fragment: string): string {
  return fragment
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === "#") {
        const hex = name[1] === "x" || name[1] === "X";
        return codePoint(Number.parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10), whole);
      }
      return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/\s+/g, " ")
    .trim();
}
