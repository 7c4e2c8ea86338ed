// MAS-OPD's configuration keys: examples/mas-opd-paper.yaml is exactly the paper's preset
// (PAPER_OPD_SETTINGS) at a constant learning rate; κ overrides go through the same checks as the
// role-conditions file; agents of one role share one adapter in the plan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseConfig } from '../../src/config/load.ts';
import { ROLE_LINE_RULES, TURN_WEIGHTINGS } from '../../src/config/choices.ts';
import { configSchema } from '../../src/config/schema.ts';
import { opdSettingsOf } from '../../src/opd/config-settings.ts';
import { configuredConditions } from '../../src/opd/config-settings.ts';
import { estimatorName } from '../../src/train/credit/index.ts';
import { DEFAULT_ROLE_CONDITIONS, contrastRole } from '../../src/opd/role-conditions.ts';
import { PAPER_OPD_SETTINGS } from '../../src/opd/settings.ts';
import { learningRate } from '../../src/train/schedules.ts';
import { planFor } from '../../src/algorithms/check.ts';
import { createWorkflowTask } from '../../src/tasks/index.ts';

const paper = new URL('../../examples/mas-opd-paper.yaml', import.meta.url).pathname;

test('examples/mas-opd-paper.yaml gives the paper’s settings, at the same learning rate every step', async () => {
  const config = await loadConfig(paper);
  assert.equal(config.algorithm, 'mas-opd');
  assert.deepEqual(opdSettingsOf(config), PAPER_OPD_SETTINGS);
  for (const step of [0, 75, 149]) assert.equal(learningRate(config.actor.optim, step, config.train.steps), 1e-6);
  // The defaults of the opd section are the paper's too.
  const defaults = parseConfig({ task: { name: 'workflow' }, algorithm: 'mas-opd' }).opd;
  // role-sentences: the role and its collaborator leave the template (issue 19); trajectory: Eq. 13's per-trajectory means.
  assert.deepEqual([defaults.lambda, defaults.pac, defaults.roleLine, defaults.minibatchSize, defaults.roleConditions, defaults.turnWeighting], [0.1, true, 'role-sentences', 64, '', 'trajectory']);
  assert.deepEqual(configSchema.fields.opd.fields.roleLine.values, ROLE_LINE_RULES);
  assert.deepEqual(configSchema.fields.opd.fields.turnWeighting.values, TURN_WEIGHTINGS);
});

test('opd.contrast overrides κ after the file; a value that is not a role name is refused at load time', () => {
  assert.equal(configuredConditions({ roleConditions: '', contrast: {} }), DEFAULT_ROLE_CONDITIONS);
  const table = configuredConditions({ roleConditions: '', contrast: { Reasoner: 'Coder' } });
  assert.deepEqual([contrastRole(table, 'Reasoner'), contrastRole(table, 'Tool-User')], ['Coder', 'Reasoner']);
  const dir = mkdtempSync(join(tmpdir(), 'marft-opd-config-'));
  try {
    const file = join(dir, 'roles.json');
    writeFileSync(file, JSON.stringify({ conditions: { Judge: ['You are the Judge.', 'You judge.'] }, contrast: { Judge: 'Coder', Coder: 'Tester' } }));
    const both = configuredConditions({ roleConditions: file, contrast: { Coder: 'Judge' } });
    assert.deepEqual([contrastRole(both, 'Judge'), contrastRole(both, 'Coder')], ['Coder', 'Judge']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => parseConfig({ task: { name: 'workflow' }, opd: { contrast: { Reasoner: 3 } } }), /^ConfigError: opd: contrast\.Reasoner: got 3, expected a role name$/);
});

test('mas-opd plans one adapter per role: agents of a role share it, and there is no critic', () => {
  const task = createWorkflowTask({ dataset: 'gsm8k', workflow: 'reasoner-tooluser', agentsPerRole: 2 });
  const plan = planFor(parseConfig({ task: { name: 'workflow' }, algorithm: 'mas-opd' }), task);
  assert.equal(estimatorName(plan.advantage), 'teacher-kl');
  assert.equal(plan.critics, null);
  assert.deepEqual(plan.policies, { reasoner_1: 'opd-reasoner', reasoner_2: 'opd-reasoner', tool_user_1: 'opd-tool-user', tool_user_2: 'opd-tool-user' });
});
