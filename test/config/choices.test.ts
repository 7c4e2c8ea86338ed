// The configuration layer describes settings and sits below the training layers (test/layering.test.ts
// checks that for every folder): the training modules import their lists of allowed values from
// src/config/choices.ts, not the other way round, and the schema offers exactly those.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ACTION_NORMALISATIONS, SCHEDULE_KINDS, VALUE_LOSS_KINDS } from '../../src/config/choices.ts';
import { configSchema } from '../../src/config/schema.ts';


test('the schema offers exactly the choices the rl modules accept', () => {
  const f = configSchema.fields;
  assert.deepEqual(f.actor.fields.actionNormalisation.values, ACTION_NORMALISATIONS);
  assert.deepEqual(f.critic.fields.valueLoss.values, VALUE_LOSS_KINDS);
  assert.deepEqual(f.actor.fields.optim.fields.schedule.values, SCHEDULE_KINDS);
  assert.deepEqual(f.critic.fields.optim.fields.schedule.values, SCHEDULE_KINDS);
});
