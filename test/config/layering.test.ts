// The configuration layer describes settings and depends on nothing in src/rl/ (the rl modules import
// their lists of allowed values from src/config/choices.ts, not the other way round).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { ACTION_NORMALISATIONS, SCHEDULE_KINDS, VALUE_LOSS_KINDS } from '../../src/config/choices.ts';
import { configSchema } from '../../src/config/schema.ts';

const configDir = new URL('../../src/config/', import.meta.url);

test('no file of src/config/ imports from src/rl/', () => {
  const files = readdirSync(configDir).filter((f) => f.endsWith('.ts'));
  assert.ok(files.includes('schema.ts') && files.includes('choices.ts'), files.join(', '));
  for (const f of files) {
    const imports = readFileSync(new URL(f, configDir), 'utf8').split('\n').filter((l) => /^\s*(import|export)\b.*\bfrom\s+'/.test(l));
    for (const line of imports) assert.doesNotMatch(line, /from '\.\.\/(rl|train|runs)\//, `${f}: ${line}`);
  }
});

test('the schema offers exactly the choices the rl modules accept', () => {
  const f = configSchema.fields;
  assert.deepEqual(f.actor.fields.actionNormalisation.values, ACTION_NORMALISATIONS);
  assert.deepEqual(f.critic.fields.valueLoss.values, VALUE_LOSS_KINDS);
  assert.deepEqual(f.actor.fields.optim.fields.schedule.values, SCHEDULE_KINDS);
  assert.deepEqual(f.critic.fields.optim.fields.schedule.values, SCHEDULE_KINDS);
});
