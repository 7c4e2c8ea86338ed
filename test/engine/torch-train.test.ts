// `marft train CONFIG --set model.engine=torch` end to end, as a user runs it: the shipped example
// whose task builds its own model (saved to RUN/base, which the torch worker then loads) trains two
// steps with the torch engine, and the same two steps on the embedded engine give the same adapters
// and critic within 1e-4. Greedy rollouts make the batch the same on both engines (their samplers
// draw different tokens from the same seed: docs/scaling.md); Adam's ε is raised to 1e-3 because its
// first steps are lr·g/(|g| + ε), which turns the engines' float32 rounding of a near-zero gradient
// into a full lr-sized difference (the conformance test's note, test/engine/torch-conformance.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readSafetensors } from '../../src/engine/hf/safetensors.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { tempDir } from './oracle-helpers.ts';
import { skipWithoutTorch } from './torch-helpers.ts';

// About 15 s on 2 shared cores (the torch worker's start-up is most of it).
const skip = skipWithoutTorch;

const SETTINGS = [
  'train.steps=2', 'train.checkpointEvery=1', 'rollout.temperature=0', 'rollout.batchSize=16',
  'actor.optim.eps=1e-3', 'critic.optim.eps=1e-3', 'model.threads=1',
].flatMap((s) => ['--set', s]);

async function trainRun(runDir: string, engine: 'embedded' | 'torch'): Promise<Record<string, unknown>[]> {
  const r = await runCli({ args: ['train', 'examples/coordination-embedded.yaml', '--run-dir', runDir, ...SETTINGS, '--set', `model.engine=${engine}`, '--no-progress'] });
  assert.equal(r.status, 0, `${engine}: exit ${r.status}\n${r.stderr}`);
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Largest |a − b| over the same-named tensors of the safetensors files of two folders, and the largest |a|. */
function folderDiff(a: string, b: string): { diff: number; tensors: Map<string, Float32Array> } {
  const files = readdirSync(a).filter((f) => f.endsWith('.safetensors'));
  assert.ok(files.length > 0, `no safetensors in ${a}`);
  let diff = 0;
  const tensors = new Map<string, Float32Array>();
  for (const f of files) {
    const ta = readSafetensors(join(a, f)), tb = readSafetensors(join(b, f));
    assert.deepEqual([...ta.keys()].sort(), [...tb.keys()].sort(), f);
    for (const [k, t] of ta) {
      const u = tb.get(k)!.data;
      for (let i = 0; i < t.data.length; i++) diff = Math.max(diff, Math.abs(t.data[i]! - u[i]!));
      tensors.set(k, t.data);
    }
  }
  return { diff, tensors };
}

test('examples/coordination-embedded.yaml with --set model.engine=torch: two MARFT steps, finite metrics, the same adapters and critic as the embedded engine within 1e-4', { skip, timeout: 300_000 }, async () => {
  const dir = tempDir('torch-train');
  try {
    const torchRun = join(dir, 'torch'), embeddedRun = join(dir, 'embedded');
    const torchMetrics = await trainRun(torchRun, 'torch');
    assert.equal(torchMetrics.length, 2);
    for (const m of torchMetrics) {
      for (const key of ['score_mean', 'policy_loss', 'value_loss', 'advantage_std', 'grad_norm_actor', 'grad_norm_critic']) {
        assert.ok(Number.isFinite(m[key]), `step ${m.step}: ${key} = ${m[key]}`);
      }
      // No NaN or infinity anywhere (JSON writes both as null; a metric with no value is null too, so numbers only).
      for (const [key, v] of Object.entries(m)) if (typeof v === 'number') assert.ok(Number.isFinite(v), `step ${m.step}: ${key} = ${v}`);
    }
    const embeddedMetrics = await trainRun(embeddedRun, 'embedded');
    assert.equal(embeddedMetrics.length, 2);
    for (const step of ['step-000001', 'step-000002']) {
      for (const part of ['adapters/policy', 'critics/critic']) {
        const { diff, tensors } = folderDiff(join(embeddedRun, 'checkpoints', step, part), join(torchRun, 'checkpoints', step, part));
        assert.ok(diff <= 1e-4, `${step} ${part}: max |embedded − torch| = ${diff}`);
        if (part === 'adapters/policy') {
          // LoRA B starts at zero: non-zero B means the step did update the policy.
          const moved = [...tensors].filter(([k]) => k.includes('lora_B')).some(([, t]) => t.some((x) => x !== 0));
          assert.ok(moved, `${step}: the policy adapter was not updated`);
        }
      }
    }
    // The same batch on both engines: the same rewards and losses (up to float32 rounding).
    for (let s = 0; s < 2; s++) {
      assert.equal(torchMetrics[s]!['score_mean'], embeddedMetrics[s]!['score_mean']);
      assert.ok(Math.abs((torchMetrics[s]!['value_loss'] as number) - (embeddedMetrics[s]!['value_loss'] as number)) < 1e-4);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
