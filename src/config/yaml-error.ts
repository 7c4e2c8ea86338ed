// A YAML (or JSON) syntax error as the user needs it: one line that names the file, line and column
// and says what is wrong, and under it the lines around the spot with a caret, as editors show it.
import { ConfigError } from './schema-dsl.ts';

/** Lines of context above the one in error. */
const CONTEXT = 2;

/** The lines before and at `line` (1-based), numbered, and a caret under column `col` (1-based). */
export function codeFrame(text: string, line: number, col: number): string {
  const lines = text.split(/\r?\n/);
  const first = Math.max(1, line - CONTEXT);
  const last = Math.min(line, lines.length);
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n++) out.push(`${n === line ? '>' : ' '} ${String(n).padStart(width)} | ${lines[n - 1] ?? ''}`);
  if (line <= lines.length) out.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, col - 1))}^`);
  return out.join('\n');
}

/** Where a yaml-library error or a JSON.parse error points, 1-based; null when it says nothing. */
function position(err: unknown, text: string): { line: number; col: number } | null {
  const linePos = (err as { linePos?: { line: number; col: number }[] }).linePos;
  if (linePos?.[0]) return linePos[0];
  // JSON.parse: "... in JSON at position 12 (line 2 column 3)" (Node 20), or only "at position 12".
  const message = (err as Error).message ?? '';
  const lc = /line (\d+) column (\d+)/.exec(message);
  if (lc) return { line: Number(lc[1]), col: Number(lc[2]) };
  const at = /at position (\d+)/.exec(message);
  if (!at) return null;
  const before = text.slice(0, Number(at[1])).split('\n');
  return { line: before.length, col: before[before.length - 1]!.length + 1 };
}

/**
 * The ConfigError for a file that does not parse: `FILE:LINE:COL: not valid YAML: WHAT`, and the code
 * frame (ConfigError.frame) for the CLI to print under it.
 */
export function syntaxError(file: string, text: string, err: unknown, language: 'YAML' | 'JSON'): ConfigError {
  const what = ((err as Error).message ?? String(err)).split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  const at = position(err, text);
  const error = new ConfigError(`${file}${at ? `:${at.line}:${at.col}` : ''}: not valid ${language}: ${what}`);
  if (at) error.frame = codeFrame(text, at.line, at.col);
  return error;
}
