// Line-by-line JSONL reading that never loses good rows to a bad one: every malformed line becomes a
// LoadError (file, 1-based line number, what is wrong) and the other lines still load.
import { readFileSync } from 'node:fs';
import { RecordError, type LoadError, type LoadResult } from './types.ts';

export type Row = Record<string, unknown>;

/**
 * Reads a JSONL file and converts each object with `convert(row, lineNumber)`. JSON syntax errors,
 * non-object lines and RecordErrors thrown by `convert` are collected; blank lines are skipped.
 * A file that cannot be read at all throws (that is not a per-line problem).
 */
export function loadJsonl<P>(file: string, convert: (row: Row, line: number) => P | P[]): LoadResult<P> {
  const text = readFileSync(file, 'utf8');
  return convertJsonlText(text, file, convert);
}

export function convertJsonlText<P>(text: string, file: string, convert: (row: Row, line: number) => P | P[]): LoadResult<P> {
  const problems: P[] = [];
  const errors: LoadError[] = [];
  const seen = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      errors.push({ file, line, message: `invalid JSON: ${(e as Error).message}` });
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push({ file, line, message: `expected a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}` });
      continue;
    }
    try {
      const out = convert(value as Row, line);
      for (const p of Array.isArray(out) ? out : [out]) {
        // Ids must be unique inside a dataset (splits and logs key on them); a repeated source id
        // (APPS selected150 lists problem 1613 twice) gets its line number appended.
        const rec = p as { id?: unknown };
        if (typeof rec.id === 'string') {
          const id = seen.has(rec.id) ? `${rec.id}@line${line}` : rec.id;
          rec.id = id;
          seen.add(id);
        }
        problems.push(p);
      }
    } catch (e) {
      if (e instanceof RecordError) errors.push({ file, line, message: e.message });
      else throw e;
    }
  }
  return { problems, errors };
}

/** A required non-empty string field. */
export function str(row: Row, key: string): string {
  const v = row[key];
  if (typeof v !== 'string') throw new RecordError(v === undefined ? `missing field "${key}"` : `field "${key}" must be a string, got ${describe(v)}`);
  if (v.trim() === '') throw new RecordError(`field "${key}" is empty`);
  return v;
}

/** An optional string field (absent, null or empty → undefined). */
export function optStr(row: Row, key: string): string | undefined {
  const v = row[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new RecordError(`field "${key}" must be a string, got ${describe(v)}`);
  return v;
}

/** A required answer field: a string, or a number written as its shortest decimal (27.0 → "27"). */
export function answerField(row: Row, key: string): string {
  const v = row[key];
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  throw new RecordError(v === undefined ? `missing field "${key}"` : `field "${key}" must be a non-empty string or number, got ${describe(v)}`);
}

/** A string field holding JSON (the Hugging Face way of storing nested test lists), or the value itself. */
export function jsonField(row: Row, key: string): unknown {
  const v = row[key];
  if (v === undefined) throw new RecordError(`missing field "${key}"`);
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch (e) {
    throw new RecordError(`field "${key}" holds invalid JSON: ${(e as Error).message}`);
  }
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

/** The id a record gets: the source's id field when present, else "<dataset>/<line>". */
export function recordId(row: Row, keys: string[], dataset: string, line: number): string {
  for (const k of keys) {
    const v = row[k];
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') return String(v);
  }
  return `${dataset}/${line}`;
}
