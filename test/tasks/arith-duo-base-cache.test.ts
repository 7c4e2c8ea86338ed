// The arith-duo task's options for studies (src/tasks/arith-duo/arith-task.ts): baseSeed fixes the
// base a run pretrains, baseCache keeps it and hands the same weights to later runs (and rebuilds a
// damaged copy), and each step's episodes carry their problem's group key, which the GRPO family
// needs. Pretraining is cut to 3 steps here (seconds).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { arithDuo, cachedBaseName, DEFAULT_ARITH_OPTIONS } from '../../src/tasks/arith-duo/arith-task.ts';
import { demoTokenizer } from '../../src/tasks/arith-duo/vocab.ts';
import type { Engine } from '../../src/engine/types.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-arith-cache-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Log-probs of one fixed sequence on the base: equal arrays mean equal weights for this purpose. */
async function fingerprint(engine: Engine): Promise<number[]> {
  const tokens = demoTokenizer().encode('3+4*2=11');
  const [lp] = await engine.score({ kind: 'base' }, [{ tokens, scoreFrom: 1 }]);
  await engine.dispose();
  return [...lp!];
}

test('baseCache: the first run pretrains and stores the base, a later run (any run seed with baseSeed) loads the same weights', async () => {
  const cache = join(root, 'cache');
  const options = { heldOut: 100, pretrainSteps: 3, baseSeed: 7, baseCache: cache };
  const first = await fingerprint(await arithDuo(options).buildEngine!(0));
  const folders = readdirSync(cache);
  assert.deepEqual(folders, [cachedBaseName({ ...DEFAULT_ARITH_OPTIONS, ...options }, 7)]);
  const stored = statSync(join(cache, folders[0]!, 'model.safetensors')).mtimeMs;
  const second = await fingerprint(await arithDuo(options).buildEngine!(3));
  assert.deepEqual(second, first, 'the cached base is the one pretrained');
  assert.equal(statSync(join(cache, folders[0]!, 'model.safetensors')).mtimeMs, stored, 'read, not rewritten');
  // Without the cache, the same base seed pretrains the same weights; another base seed, others.
  assert.deepEqual(await fingerprint(await arithDuo({ heldOut: 100, pretrainSteps: 3, baseSeed: 7 }).buildEngine!(1)), first);
  assert.notDeepEqual(await fingerprint(await arithDuo({ heldOut: 100, pretrainSteps: 3, baseSeed: 8 }).buildEngine!(7)), first);
});

test('the cache folder\'s name changes with anything that shapes the base; a damaged copy is rebuilt', async () => {
  const base = { ...DEFAULT_ARITH_OPTIONS, heldOut: 100, pretrainSteps: 3 };
  const name = cachedBaseName(base, 0);
  assert.notEqual(cachedBaseName({ ...base, pretrainSteps: 4 }, 0), name);
  assert.notEqual(cachedBaseName({ ...base, heldOut: 101 }, 0), name);
  assert.notEqual(cachedBaseName(base, 1), name);
  assert.equal(cachedBaseName({ ...base, trainAgents: ['planner'] }, 0), name, 'which agents train does not shape the base');
  const cache = join(root, 'damaged');
  const options = { heldOut: 100, pretrainSteps: 3, baseCache: cache };
  const good = await fingerprint(await arithDuo(options).buildEngine!(0));
  writeFileSync(join(cache, name, 'model.safetensors'), 'cut short');
  assert.deepEqual(await fingerprint(await arithDuo(options).buildEngine!(0)), good, 'rebuilt from the seed');
  assert.ok(statSync(join(cache, name, 'model.safetensors')).size > 1000);
  assert.equal(readdirSync(cache).length, 1, 'no temporary folder left');
});

test('bad baseSeed and baseCache are one line naming the option', () => {
  assert.throws(() => arithDuo({ baseSeed: -1 }), /^Error: task\.options\.baseSeed: got -1, expected an integer >= 0$/);
  assert.throws(() => arithDuo({ baseCache: 3 }), /^Error: task\.options\.baseCache: got 3, expected a folder path/);
  assert.throws(() => arithDuo({ baseCach: 'x' }), /task\.options\.baseCach: unknown option of arith-duo/);
});

test('a step\'s episodes carry their problem\'s group key: rolloutsPerPrompt adjacent episodes share one, problems differ', async () => {
  const bundle = arithDuo({ heldOut: 100, pretrainSteps: 0 });
  const engine = await bundle.buildEngine!(0);
  try {
    const episodes = await bundle.task.rollout(engine, { step: 0, seed: 5, batchSize: 3, rolloutsPerPrompt: 2, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 4 }, policies: {} });
    assert.equal(episodes.length, 6);
    const keys = episodes.map((e) => e.group);
    assert.deepEqual(keys, ['problem-0', 'problem-0', 'problem-1', 'problem-1', 'problem-2', 'problem-2']);
    for (let i = 0; i < 6; i += 2) assert.equal(episodes[i]!.problemId, episodes[i + 1]!.problemId);
  } finally {
    await engine.dispose();
  }
  assert.ok(!existsSync(join(root, 'runs')), 'no cache without baseCache');
});
