// The non-blank lines of a command's JSON-lines input, streamed (inputs may be large) with their
// 1-based line numbers so that errors can name the line. '-' reads standard input.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export interface InputLine {
  /** 1-based, counting blank lines too (what an editor shows). */
  number: number;
  text: string;
}

export async function* readInputLines(path: string): AsyncGenerator<InputLine> {
  const input = path === '-' ? process.stdin : createReadStream(path, 'utf8');
  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  for await (const text of lines) {
    number++;
    if (text.trim() !== '') yield { number, text };
  }
}
