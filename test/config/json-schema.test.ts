// schema/marft-config.schema.json (for editors) is generated from the schema DSL and current; it
// accepts what marft accepts and refuses what marft refuses, checked here with a small validator of
// the draft-07 keywords it uses, on every example and on a table of mistakes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { configJsonSchemaText } from '../../src/config/json-schema.ts';
import { parseConfig } from '../../src/config/load.ts';
import { configSchema } from '../../src/config/schema.ts';
import { ConfigError, docRows } from '../../src/config/schema-dsl.ts';

type Schema = Record<string, any>;
const file = new URL('../../schema/marft-config.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(file, 'utf8')) as Schema;

/** The paths where `value` breaks `s` (type, enum, minimum, exclusiveMinimum, maximum, items, properties, additionalProperties, required). */
function violations(s: Schema, value: unknown, path = ''): string[] {
  const out: string[] = [];
  const at = path || '(top)';
  const type = s.type as string | undefined;
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (type === 'object' && !isObject) return [`${at}: not an object`];
  if (type === 'array' && !Array.isArray(value)) return [`${at}: not an array`];
  if (type === 'integer' && !Number.isInteger(value)) return [`${at}: not an integer`];
  if (type === 'number' && typeof value !== 'number') return [`${at}: not a number`];
  if (type === 'boolean' && typeof value !== 'boolean') return [`${at}: not a boolean`];
  if (type === 'string' && typeof value !== 'string') return [`${at}: not a string`];
  if (s.enum && !(s.enum as unknown[]).includes(value)) out.push(`${at}: not in the enum`);
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) out.push(`${at}: below minimum`);
    if (s.exclusiveMinimum !== undefined && value <= s.exclusiveMinimum) out.push(`${at}: not above exclusiveMinimum`);
    if (s.maximum !== undefined && value > s.maximum) out.push(`${at}: above maximum`);
  }
  if (Array.isArray(value) && s.items) value.forEach((v, i) => out.push(...violations(s.items, v, `${at}[${i}]`)));
  if (isObject) {
    const obj = value as Record<string, unknown>;
    for (const r of (s.required ?? []) as string[]) if (!(r in obj)) out.push(`${at}: ${r} required`);
    for (const [k, v] of Object.entries(obj)) {
      const child = s.properties?.[k];
      if (child) out.push(...violations(child, v, path ? `${path}.${k}` : k));
      else if (s.additionalProperties === false) out.push(`${path ? `${path}.${k}` : k}: unknown key`);
    }
  }
  return out;
}

test('schema/marft-config.schema.json is generated from the schema and up to date', () => {
  assert.equal(readFileSync(file, 'utf8'), configJsonSchemaText(), 'regenerate: node --import tsx src/config/json-schema.ts > schema/marft-config.schema.json');
  // Every documented key is a property, with the DSL's default.
  for (const row of docRows(configSchema)) {
    const node = row.key.split('.').reduce((s: Schema, k) => s.properties[k], schema);
    assert.ok(node, row.key);
    if (row.default !== '{}') assert.deepEqual(node.default, JSON.parse(row.default), row.key);
    assert.ok(typeof node.description === 'string' && node.description.length > 0, row.key);
  }
});

test('the JSON Schema accepts every example and refuses what marft refuses', () => {
  const dir = new URL('../../examples/', import.meta.url).pathname;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) assert.deepEqual(violations(schema, parseYaml(readFileSync(join(dir, f), 'utf8'))), [], f);
  for (const f of readdirSync(join(dir, 'real')).filter((x) => x.endsWith('.yaml'))) assert.deepEqual(violations(schema, parseYaml(readFileSync(join(dir, 'real', f), 'utf8'))), [], f);
  // The defaults, spelled out (and the resolved config.json a run writes) are valid files too.
  assert.deepEqual(violations(schema, parseConfig({ task: { name: 'bandit' } })), []);
  const bad: [unknown, RegExp][] = [
    [{ task: { name: 'bandit' }, algoritm: 'ippo' }, /^algoritm: unknown key$/],
    [{ task: { name: 'bandit' }, critic: { kindd: 'mlp' } }, /^critic\.kindd: unknown key$/],
    [{ task: { name: 'bandit' }, advantage: { gamma: 1.5 } }, /^advantage\.gamma: above maximum$/],
    [{ task: { name: 'bandit' }, rollout: { topP: 0 } }, /^rollout\.topP: not above exclusiveMinimum$/],
    [{ task: { name: 'bandit' }, train: { steps: 2.5 } }, /^train\.steps: not an integer$/],
    [{ task: { name: 'bandit' }, rollout: { batchSize: 1e9 } }, /^rollout\.batchSize: above maximum$/],
    [{ task: { name: 'bandit' }, actor: { actionNormalisation: 'words' } }, /^actor\.actionNormalisation: not in the enum$/],
    [{ task: { name: 'bandit' }, policy: { targetModules: ['q_proj', 'lm_head'] } }, /^policy\.targetModules\[1\]: not in the enum$/],
    [{ task: { name: 'bandit' }, log: { to: ['wandb'] } }, /^log\.to\[0\]: not in the enum$/],
    [{ task: { name: 'bandit' }, critic: { mlpHidden: [64, -1] } }, /^critic\.mlpHidden\[1\]: below minimum$/],
    [{ algorithm: 'ippo' }, /^\(top\): task required$/],
    [{ task: { options: {} } }, /^task: name required$/],
  ];
  for (const [config, why] of bad) {
    const found = violations(schema, config);
    assert.equal(found.length, 1, `${JSON.stringify(config)}: ${found.join('; ')}`);
    assert.match(found[0]!, why);
    // marft itself refuses the same file (parseConfig for the keys, loadConfig for task.name).
    const named = (config as { task?: { name?: unknown } }).task?.name !== undefined;
    if (named) assert.throws(() => parseConfig(config), ConfigError, JSON.stringify(config));
  }
});
