// critic.headInit: 'zero' starts the value head's last layer at weight and bias 0, so every value of a
// new critic is exactly 0 (0·x + 0 in every sum), while the layers before it are drawn exactly as the
// default's, and the zero layer still learns (its gradient is dL/dv times the previous layer's
// output). The default ('torch') is unchanged: its critic folder has no new key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCritic, hostTensor } from '../../src/engine/trainables.ts';
import type { ValueHeadSpec } from '../../src/engine/types.ts';
import { createEngine } from '../../src/engine/index.ts';
import { tinyModelConfig } from '../../src/tasks/tiny-model.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { parseConfig } from '../../src/config/load.ts';
import { createTrainables } from '../../src/train/loop.ts';

const model = tinyModelConfig(new CharTokenizer('0123456789'), { hiddenSize: 8, layers: 1, contextLength: 64 });
const batch = [{ tokens: [1, 2, 3, 4], scoreFrom: 1 }, { tokens: [5, 6, 7], scoreFrom: 1 }];

test('a zero head: the last layer is 0, every earlier layer (and a LoRA critic\'s adapter) as the default draws it', () => {
  const specs: ValueHeadSpec[] = [{ kind: 'mlp', hidden: [6, 5] }, { kind: 'lora-critic', lora: { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] } }];
  for (const spec of specs) {
    const torch = createCritic(model, spec, 11, hostTensor);
    const zero = createCritic(model, { ...spec, zeroLastLayer: true }, 11, hostTensor);
    const last = zero.head.layers.length - 1;
    assert.ok(zero.head.layers[last]!.W.data.every((x) => x === 0) && zero.head.layers[last]!.b.data.every((x) => x === 0), spec.kind);
    assert.ok(torch.head.layers[last]!.W.data.some((x) => x !== 0), `${spec.kind}: the default's last layer is drawn`);
    for (let i = 0; i < last; i++) {
      assert.deepEqual(zero.head.layers[i]!.W.data, torch.head.layers[i]!.W.data);
      assert.deepEqual(zero.head.layers[i]!.b.data, torch.head.layers[i]!.b.data);
    }
    assert.deepEqual(zero.lora?.layers, torch.lora?.layers);
  }
});

test('critic.headInit from the configuration: zero gives values of exactly 0 that move after one step; torch gives nonzero values and the folder as before', async () => {
  const values: Record<string, Float32Array[]> = {};
  for (const headInit of ['torch', 'zero'] as const) {
    const config = parseConfig({ algorithm: 'marft-action', seed: 2, task: { name: 'coordination-game' }, model: { engine: 'embedded' }, critic: { kind: 'mlp', mlpHidden: [4], headInit } });
    const engine = createEngine(model, { seed: 1 });
    await createTrainables(engine, config, { policies: { a: 'policy' }, critics: { a: 'critic' } });
    const target = { kind: 'critic' as const, name: 'critic' };
    const out = await engine.forward(target, batch, { retainGraph: true });
    values[headInit] = out.values!;
    await engine.backward(out.handle!, { dValues: out.values!.map((v) => v.map(() => 1)) });
    await engine.optimStep(target, { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
    const after = (await engine.forward(target, batch)).values!;
    assert.ok(after.some((v) => v.some((x) => x !== 0)), `${headInit}: the head learns`);
    const dir = mkdtempSync(join(tmpdir(), 'marft-head-init-'));
    try {
      await engine.saveCritic('critic', dir);
      const spec = (JSON.parse(readFileSync(join(dir, 'critic_config.json'), 'utf8')) as { spec: Record<string, unknown> }).spec;
      assert.equal('zeroLastLayer' in spec, headInit === 'zero');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  assert.ok(values.zero!.every((v) => v.every((x) => x === 0)), 'a zero head values every position at exactly 0');
  assert.ok(values.torch!.some((v) => v.some((x) => x !== 0)), 'the default head does not');
});
