// The non-blank lines of a command's JSON-lines input, streamed (inputs may be large) with their
// 1-based line numbers so that errors can name the line. '-' reads standard input.
import { constants, createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { UserError } from './errors.ts';

export interface InputLine {
  /** 1-based, counting blank lines too (what an editor shows). */
  number: number;
  text: string;
}

/** Refuses, in one line, an input that is missing, a folder or unreadable ('-' is standard input). */
export async function checkInputFile(flag: string, path: string): Promise<void> {
  if (path === '-') return;
  const info = await stat(path).catch(() => null);
  if (!info) throw new UserError(`${flag} ${path}: no such file`);
  if (info.isDirectory()) throw new UserError(`${flag} ${path}: is a folder, not a file`);
  await access(path, constants.R_OK).catch(() => {
    throw new UserError(`${flag} ${path}: cannot be read (permission denied)`);
  });
}

export async function* readInputLines(path: string): AsyncGenerator<InputLine> {
  const input = path === '-' ? process.stdin : createReadStream(path, 'utf8');
  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const text of lines) {
      number++;
      if (text.trim() !== '') yield { number, text };
    }
  } catch (err) {
    // A read that fails after the checks (the file vanished, a device error) is the input's fault, not a bug.
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw new UserError(`${path}: cannot be read after line ${number} (${code})`);
    throw err;
  }
}
