// Types for the tests of the snippet check.
export declare const CACHE_DIR: string;
export interface Block {
  lang: string;
  info: string;
  line: number;
  code: string;
  fragment: string | undefined;
  continues: boolean;
}
export declare function extractBlocks(text: string): { blocks: Block[]; problems: Array<{ line: number; message: string }> };
