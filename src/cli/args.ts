// A small flag parser shared by the subcommands: `--key value`, `--key=value`, `--flag`, positionals.
import { UserError } from './errors.ts';

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

export function parseArgs(argv: string[], spec: { boolean?: string[]; string?: string[] }): ParsedArgs {
  const booleans = new Set(spec.boolean ?? []);
  const strings = new Set(spec.string ?? []);
  const flags = new Map<string, string | true>();
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
    } else if (strings.has(key)) {
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UserError(`--${key} needs a value`);
      flags.set(key, value);
    } else {
      const known = [...booleans, ...strings].map((k) => `--${k}`).join(', ');
      throw new UserError(`unknown option --${key}${known ? ` (known: ${known})` : ''}`);
    }
  }
  return { positionals, flags };
}

export function stringFlag(args: ParsedArgs, key: string): string | undefined {
  const v = args.flags.get(key);
  return typeof v === 'string' ? v : undefined;
}

export function requireFlag(args: ParsedArgs, key: string): string {
  const v = stringFlag(args, key);
  if (v === undefined) throw new UserError(`--${key} is required`);
  return v;
}

export function numberFlag(args: ParsedArgs, key: string, fallback: number): number {
  const v = stringFlag(args, key);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UserError(`--${key} must be a number, got '${v}'`);
  return n;
}
