// The algorithm presets (examples/presets/<algorithm>-<source>.yaml) validate, and carry the
// settings docs/algorithms.md attributes to them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { loadConfig } from '../../src/config/load.ts';

const dir = new URL('../../examples/presets/', import.meta.url).pathname;

test('every preset validates, is named <algorithm>-<source>.yaml, and its plan fits a two-agent task', async () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  assert.deepEqual(files, ['grpo-authors.yaml', 'grpo-mas-opd.yaml', 'magrpo-mas-opd.yaml']);
  for (const f of files) {
    const config = await loadConfig(join(dir, f));
    assert.ok(f.startsWith(`${config.algorithm}-`), `${f} sets algorithm ${config.algorithm}`);
    const plan = ALGORITHM_REGISTRY[config.algorithm].plan(['a', 'b'], config);
    assert.equal(plan.critics, null, f);
    assert.ok(config.rollout.rolloutsPerPrompt >= 2, f);
  }
});

test('the MAS-OPD presets use the paper’s settings; the GRPO authors’ preset DeepSeekMath’s', async () => {
  for (const f of ['grpo-mas-opd.yaml', 'magrpo-mas-opd.yaml']) {
    const c = await loadConfig(join(dir, f));
    assert.deepEqual([c.actor.optim.lr, c.rollout.batchSize, c.rollout.rolloutsPerPrompt, c.rollout.temperature], [1e-6, 128, 4, 1], f);
  }
  const masGrpo = await loadConfig(join(dir, 'grpo-mas-opd.yaml'));
  assert.deepEqual([masGrpo.actor.clipLow, masGrpo.actor.clipHigh], [0.2, 0.2]);
  const authors = await loadConfig(join(dir, 'grpo-authors.yaml'));
  assert.deepEqual([authors.actor.optim.lr, authors.actor.klCoef, authors.rollout.rolloutsPerPrompt, authors.rollout.batchSize * authors.rollout.rolloutsPerPrompt], [1e-6, 0.04, 64, 1024]);
});
