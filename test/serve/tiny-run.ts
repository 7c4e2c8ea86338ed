// A run folder as marft train leaves it, made in a second instead of trained: a tiny random Qwen3 model
// folder (the tasks' character tokenizer), a GSM8K Duo configuration (action-level MARFT, one adapter
// per agent), and checkpoint step-000001 holding the two agents' LoRA adapters with random B factors
// (a freshly created adapter has B = 0 and would act exactly as the base, so nothing served or exported
// from it could tell an adapter from the base).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import type { MarftConfig } from '../../src/config/schema.ts';
import { Rng } from '../../src/engine/embedded/sampling.ts';
import type { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { buildRun } from '../../src/run/setup.ts';
import { saveCheckpoint } from '../../src/runs/checkpoint.ts';
import { taskCharTokenizer, tinyEngine } from '../../src/tasks/index.ts';
import { planFor } from '../../src/algorithms/check.ts';

export interface TinyRun {
  runDir: string;
  modelDir: string;
  checkpoint: string;
  config: MarftConfig;
  /** agent → adapter */
  policies: Record<string, string>;
}

/** Writes the model folder and the run folder under `dir`. */
export async function makeTinyRun(dir: string, options: { hiddenSize?: number; seed?: number } = {}): Promise<TinyRun> {
  const modelDir = join(dir, 'model');
  const runDir = join(dir, 'run');
  const tokenizer = taskCharTokenizer();
  const base = tinyEngine(tokenizer, { hiddenSize: options.hiddenSize ?? 32, layers: 2, contextLength: 2048 }, options.seed ?? 3);
  await base.saveBase(modelDir);
  tokenizer.save(modelDir);
  await base.dispose();
  const config = parseConfig({
    algorithm: 'marft-action',
    seed: 0,
    task: { name: 'workflow', options: { dataset: 'gsm8k', workflow: 'duo', maxProblemTokens: 300 } },
    model: { engine: 'embedded', path: modelDir },
    policy: { parameterSharing: false, loraRank: 4, loraAlpha: 8 },
    critic: { kind: 'mlp', mlpHidden: [8] },
    rollout: { batchSize: 1, rolloutsPerPrompt: 1, maxNewTokens: 12 },
    eval: { temperature: 0, seeds: 1, problems: 2 },
  });
  const { engine, bundle } = await buildRun(config);
  const { policies } = planFor(config, bundle.task);
  const adapters = [...new Set(Object.values(policies))];
  const rng = new Rng(options.seed ?? 3);
  for (const [k, name] of adapters.entries()) {
    await engine.createAdapter(name, { rank: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, 10 + k);
    for (const layer of (engine as EmbeddedEngine).getAdapter(name).layers) {
      for (const mod of Object.values(layer)) for (let i = 0; i < mod!.B.data.length; i++) mod!.B.data[i] = (rng.next() - 0.5) * 0.4;
    }
  }
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'config.json'), JSON.stringify(config, null, 2));
  const checkpoint = await saveCheckpoint(engine, runDir, { step: 1, metricsLines: 0, seed: config.seed, adapters, critics: [], config }, 1);
  await engine.dispose();
  return { runDir, modelDir, checkpoint, config, policies };
}
