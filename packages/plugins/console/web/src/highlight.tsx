// Minimal syntax highlighting for code artifacts and fenced blocks: comments, strings, numbers and keywords of the
// languages agents usually write, as React spans (no HTML strings). Unknown languages come back as plain text.
import type { ReactNode } from "react";

const KEYWORDS = new Set(
  (
    "as async await break case catch class const continue def default del do elif else enum except export extends false finally " +
    "for from func function go if import in interface is lambda let match new nil none null of pass package private protected " +
    "public raise return self static struct super switch this throw true try type typeof var void while with yield fn impl mut pub use " +
    "True False None echo then fi done esac local"
  ).split(" "),
);

const LANGUAGES = new Set([
  "js",
  "jsx",
  "ts",
  "tsx",
  "mjs",
  "cjs",
  "py",
  "python",
  "sh",
  "bash",
  "shell",
  "json",
  "go",
  "rs",
  "rust",
  "java",
  "c",
  "cpp",
  "h",
  "rb",
  "yaml",
  "yml",
  "toml",
  "sql",
  "javascript",
  "typescript",
]);
const HASH_COMMENTS = new Set(["py", "python", "sh", "bash", "shell", "rb", "yaml", "yml", "toml"]);

const EXTENSION = /\.([A-Za-z0-9]+)$/;

/** The language of a file name or fence tag, when it is one the highlighter knows. */
export function languageOf(nameOrTag: string | undefined): string | undefined {
  if (!nameOrTag) return undefined;
  const tag = (EXTENSION.exec(nameOrTag)?.[1] ?? nameOrTag).toLowerCase();
  return LANGUAGES.has(tag) ? tag : undefined;
}

export function highlight(code: string, language: string | undefined): ReactNode {
  if (!language || code.length > 200_000) return code;
  const comment = HASH_COMMENTS.has(language)
    ? String.raw`#[^\n]*`
    : language === "sql"
      ? String.raw`--[^\n]*`
      : String.raw`\/\/[^\n]*|\/\*[\s\S]*?\*\/`;
  const pattern = new RegExp(
    `(${comment})|("(?:[^"\\\\\\n]|\\\\.)*"|'(?:[^'\\\\\\n]|\\\\.)*'|\`(?:[^\`\\\\]|\\\\.)*\`)|(\\b\\d+(?:\\.\\d+)?\\b)|([A-Za-z_][A-Za-z0-9_]*)`,
    "g",
  );
  const out: ReactNode[] = [];
  let last = 0;
  let n = 0;
  for (let m = pattern.exec(code); m !== null; m = pattern.exec(code)) {
    const [token, isComment, isString, isNumber, word] = m;
    const cls = isComment ? "tok-c" : isString ? "tok-s" : isNumber ? "tok-n" : word && KEYWORDS.has(word) ? "tok-k" : undefined;
    if (!cls) continue;
    if (m.index > last) out.push(code.slice(last, m.index));
    out.push(
      <span key={n++} className={cls}>
        {token}
      </span>,
    );
    last = m.index + token.length;
  }
  if (last < code.length) out.push(code.slice(last));
  return out;
}
