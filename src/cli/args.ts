// A small flag parser shared by the subcommands: `--key value`, `--key=value`, `--flag`, positionals.
// `--key value` never takes a flag as its value (`--run-dir --no-progress` is a forgotten value, not
// a folder named "--no-progress"); `--key=--odd` still passes such a value on purpose.
import { UserError } from './errors.ts';
import { didYouMean } from '../core/did-you-mean.ts';

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
  /** Values of the repeatable flags, in order (absent: never given). */
  lists: Map<string, string[]>;
}

export interface ArgsSpec {
  boolean?: string[];
  /** Flags that take one value, given at most once. */
  string?: string[];
  /** Flags that take one value and may be repeated (`--set a=1 --set b=2`). */
  repeatable?: string[];
}

export function parseArgs(argv: string[], spec: ArgsSpec): ParsedArgs {
  const booleans = new Set(spec.boolean ?? []);
  const strings = new Set(spec.string ?? []);
  const repeatable = new Set(spec.repeatable ?? []);
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const key = arg.slice(2, eq < 0 ? undefined : eq);
    if (booleans.has(key)) {
      if (eq >= 0) throw new UserError(`--${key} takes no value`);
      flags.set(key, true);
    } else if (strings.has(key) || repeatable.has(key)) {
      let value: string | undefined;
      if (eq >= 0) value = arg.slice(eq + 1);
      else {
        value = argv[++i];
        if (value === undefined) throw new UserError(`--${key} needs a value`);
        if (value.startsWith('--')) throw new UserError(`--${key} needs a value, got the flag ${value} (write --${key}=${value} if that is the value)`);
      }
      if (repeatable.has(key)) lists.set(key, [...(lists.get(key) ?? []), value]);
      else {
        if (flags.has(key)) throw new UserError(`--${key} is given twice ('${flags.get(key)}' and '${value}')`);
        flags.set(key, value);
      }
    } else {
      const names = [...booleans, ...strings, ...repeatable];
      const hint = didYouMean(key, names, (k) => `--${k}`);
      const known = names.map((k) => `--${k}`).join(', ');
      throw new UserError(`unknown option --${key}${hint ? `; ${hint}` : ''}${known ? ` (known: ${known})` : ''}`);
    }
  }
  return { positionals, flags, lists };
}

export function stringFlag(args: ParsedArgs, key: string): string | undefined {
  const v = args.flags.get(key);
  return typeof v === 'string' ? v : undefined;
}

export function listFlag(args: ParsedArgs, key: string): string[] {
  return args.lists.get(key) ?? [];
}

export function requireFlag(args: ParsedArgs, key: string): string {
  const v = stringFlag(args, key);
  if (v === undefined) throw new UserError(`--${key} is required`);
  if (v === '') throw new UserError(`--${key} needs a value, got an empty one`);
  return v;
}

/** A finite number (Number() alone would turn '' into 0 and accept 'Infinity'); `fallback` when absent. */
export function numberFlag(args: ParsedArgs, key: string, fallback: number): number {
  const v = stringFlag(args, key);
  if (v === undefined) return fallback;
  const n = v.trim() === '' ? NaN : Number(v);
  if (Number.isNaN(n)) throw new UserError(`--${key} must be a number, got '${v}'`);
  if (!Number.isFinite(n)) throw new UserError(`--${key} must be a finite number, got '${v}'`);
  return n;
}

/** A finite number > 0 (e.g. a temperature or a time limit). */
export function positiveNumberFlag(args: ParsedArgs, key: string, fallback: number): number {
  const n = numberFlag(args, key, fallback);
  if (!(n > 0)) throw new UserError(`--${key} must be a positive number, got '${stringFlag(args, key)}'`);
  return n;
}
