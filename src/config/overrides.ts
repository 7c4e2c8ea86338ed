// `--set KEY=VALUE` (marft train, marft eval): changes one key of a configuration from the command
// line. KEY is dotted (actor.optim.lr, task.options.dataset); VALUE is written as in YAML: a scalar
// (3e-4, true, ippo), a flow sequence ([q_proj, v_proj]) or a flow mapping ({symbols: 4}). KEY then
// holds VALUE exactly as if the file said `KEY: VALUE` (a mapping replaces the file's mapping).
//
// Each override is checked against the schema where it lands before it is applied, so that a mistake
// names the --set that made it rather than the file; keys under a free-form mapping (task.options) are
// left to the component that reads them, like the file's own.
import { parse as parseYaml } from 'yaml';
import { configSchema } from './schema.ts';
import { ConfigError, allowedValues, unknownKey, validate, type SchemaNode } from './schema-dsl.ts';

export interface Override {
  /** As given, for errors: `actor.optim.lr=3e-4`. */
  text: string;
  path: string[];
  value: unknown;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The schema node at `path`, or null below a free-form mapping (nothing to check there). */
function nodeAt(path: string[], fail: (why: string) => never): SchemaNode | null {
  let node: SchemaNode = configSchema;
  for (let i = 0; i < path.length; i++) {
    const here = path.slice(0, i).join('.');
    if (node.kind === 'record') return null;
    if (node.kind !== 'object') fail(`${here} is not a mapping (it holds ${allowedValues(node)})`);
    const fields: Record<string, SchemaNode> = node.fields;
    // The schema's own wording for an unknown key (src/config/schema-dsl.ts, validate).
    if (!Object.hasOwn(fields, path[i]!)) fail(unknownKey(here, path[i]!, Object.keys(fields)));
    node = fields[path[i]!]!;
  }
  return node;
}

/** Parses and checks one `KEY=VALUE`; throws a one-line ConfigError that starts with `--set KEY=VALUE:`. */
export function parseOverride(text: string): Override {
  const fail = (why: string): never => {
    throw new ConfigError(`--set ${text}: ${why}`);
  };
  const eq = text.indexOf('=');
  if (eq <= 0) fail('expected KEY=VALUE with a dotted KEY (e.g. --set actor.optim.lr=3e-4)');
  const key = text.slice(0, eq).trim();
  const path = key.split('.');
  if (path.some((p) => p === '')) fail(`the key '${key}' has an empty part`);
  const node = nodeAt(path, fail);
  const written = text.slice(eq + 1);
  let value: unknown;
  if (node?.kind === 'string' || written === '') {
    // A path or a name is taken as written (a folder named 123 stays a string); `KEY=` is the empty string.
    value = written;
  } else {
    try {
      value = parseYaml(written);
    } catch (err) {
      fail(`the value is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (node) {
    try {
      validate(node, value, key);
    } catch (err) {
      if (err instanceof ConfigError) fail(err.message);
      throw err;
    }
  }
  return { text, path, value };
}

/** A copy of the parsed configuration `raw` (null for an empty file) with the overrides applied in order. */
export function applyOverrides(raw: unknown, overrides: readonly Override[]): unknown {
  if (overrides.length === 0) return raw;
  // Not a mapping: the schema's validation reports it as it would without overrides.
  if (raw !== null && raw !== undefined && !isPlainObject(raw)) return raw;
  const out: Record<string, unknown> = structuredClone(raw ?? {});
  for (const { text, path, value } of overrides) {
    let cur = out;
    for (let i = 0; i < path.length - 1; i++) {
      const next = cur[path[i]!];
      if (next === undefined || next === null) cur[path[i]!] = {};
      else if (!isPlainObject(next)) throw new ConfigError(`--set ${text}: ${path.slice(0, i + 1).join('.')} holds ${JSON.stringify(next)} in the configuration, not a mapping`);
      cur = cur[path[i]!] as Record<string, unknown>;
    }
    cur[path[path.length - 1]!] = value;
  }
  return out;
}
