/** What a converter read from a document: Markdown sections in order, and how many of how many units it read. */
export interface ConvertedDocument {
  readonly sections: readonly string[];
  /** Units read and units in the document, when the document has pages, slides or sheets. */
  readonly read?: number;
  readonly total?: number;
  readonly unit?: "pages" | "slides" | "sheets";
}

export interface ConverterLimits {
  /** Most pages, slides or sheets to read. */
  readonly maxUnits: number;
  /** Stop reading once this many characters were collected: the caller cuts to bytes afterwards. */
  readonly maxChars: number;
}

/** Lets other work run between pages, slides and sheets, so a big document never holds the event loop long. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
