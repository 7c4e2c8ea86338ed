// A smaller student for MAS-OPD on a real teacher (docs/real-models.md, "MAS-OPD"): the teacher's
// embedding, final norm and a subset of its decoder layers (the first K − 2 and the last 2), so the
// student shares the teacher's tokenizer, then briefly fitted, all parameters, on the
// teacher's own samples: the teacher plays every agent of the configuration's workflow on training
// problems, and the student learns to say what it said (next-token cross-entropy on the replies).
//
//   node --import tsx scripts/make-student.ts --teacher models/smollm2-135m-instruct \
//     --config examples/real/mas-opd-word-problems.yaml --out models/smollm2-student [--layers 6]
//     [--episodes 96] [--epochs 2] [--lr 2e-4] [--seed 0]
//
// The folder gets the teacher's tokenizer files and a source.json saying how it was made.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import { deriveSeed, Rng } from '../src/core/rng.ts';
import { EmbeddedEngine } from '../src/engine/embedded/engine.ts';
import { loadBaseDir, saveBaseDir } from '../src/engine/embedded/engine-io.ts';
import type { BaseWeights } from '../src/engine/embedded/weights.ts';
import type { ModelConfig, ScoreRequest } from '../src/engine/types.ts';
import { buildTask } from '../src/run/setup.ts';
import { sft } from '../src/train/sft.ts';
import { BASE_POLICY } from '../src/workflow/index.ts';

const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja', 'special_tokens_map.json', 'LICENSE'];

/**
 * `k` of the `n` layer indices: the first k − 2 and the last 2 (k < 3: the first k). On SmolLM2 this
 * cut scored a written chat answer better than evenly spaced layers before any fitting (mean log-prob
 * −15.3 against −20.4 for 6 of 30 layers, one sequence; the full model −0.67): a reading, not a study.
 */
export function keptLayers(n: number, k: number): number[] {
  if (!(Number.isInteger(k) && k >= 1 && k <= n)) throw new Error(`--layers: expected a whole number in [1, ${n}], got ${k}`);
  if (k < 3) return Array.from({ length: k }, (_, i) => i);
  return [...Array.from({ length: k - 2 }, (_, i) => i), n - 2, n - 1];
}

/** The teacher's weights with only the decoder layers `keep`: the same arrays, so training the student changes the teacher's weights. */
export function subsetModel(config: ModelConfig, weights: BaseWeights, keep: readonly number[]): { config: ModelConfig; weights: BaseWeights } {
  return { config: { ...config, numHiddenLayers: keep.length }, weights: { ...weights, layers: keep.map((i) => weights.layers[i]!) } };
}

const USAGE = 'usage: node --import tsx scripts/make-student.ts --teacher DIR --config CONFIG.yaml --out DIR [--layers 6] [--episodes 96] [--epochs 2] [--lr 2e-4] [--seed 0]';

async function main(argv: string[]): Promise<void> {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        teacher: { type: 'string' }, config: { type: 'string' }, out: { type: 'string' },
        layers: { type: 'string', default: '6' }, episodes: { type: 'string', default: '96' }, epochs: { type: 'string', default: '2' },
        lr: { type: 'string', default: '2e-4' }, seed: { type: 'string', default: '0' },
      },
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const { teacher: teacherDir, config: configFile, out } = values;
  if (!teacherDir || !configFile || !out) {
    console.error(USAGE);
    process.exit(2);
  }
  const num = (flag: string): number => {
    const v = Number(values[flag]);
    if (!Number.isFinite(v) || v < 0) {
      console.error(`--${flag}: expected a number >= 0, got ${values[flag]}`);
      process.exit(2);
    }
    return v;
  };
  const layers = num('layers'), episodes = num('episodes'), epochs = num('epochs'), lr = num('lr'), seed = num('seed');
  if (!existsSync(join(teacherDir, 'config.json'))) {
    console.error(`--teacher: ${teacherDir} holds no config.json (for SmolLM2: bash scripts/setup.sh --smollm2)`);
    process.exit(2);
  }
  const started = Date.now();
  const config = await loadConfig(configFile, [`model.path=${teacherDir}`]);
  const { task } = await buildTask(config);
  const teacherBase = loadBaseDir(teacherDir);
  const teacher = new EmbeddedEngine(teacherBase.config, teacherBase.weights);

  // 1. The teacher's own episodes on training problems, at the configuration's training sampling.
  const perStep = config.rollout.batchSize;
  const requests: ScoreRequest[] = [];
  let correct = 0, played = 0;
  for (let step = 0; played < episodes; step++) {
    const batch = await task.rollout(teacher, {
      step, seed: deriveSeed(seed, 1, step), batchSize: Math.min(perStep, episodes - played), rolloutsPerPrompt: 1,
      sampling: { temperature: config.rollout.temperature, topP: config.rollout.topP, topK: config.rollout.topK, maxNewTokens: config.rollout.maxNewTokens },
      policies: Object.fromEntries(task.agents.map((a) => [a, BASE_POLICY])),
    });
    for (const ep of batch) {
      played++;
      if (ep.outcome > 0) correct++;
      for (const a of ep.actions) if (a.actionTokens.length > 0) requests.push({ tokens: [...a.promptTokens, ...a.actionTokens], scoreFrom: a.promptTokens.length });
    }
    console.log(`[make-student] teacher episodes ${played}/${episodes} (${correct} correct), ${Math.round((Date.now() - started) / 1000)} s`);
  }
  await teacher.dispose();

  // 2. The student: a subset of the teacher's layers, fitted on those replies. It takes the teacher's
  // weight arrays themselves (no second read of the folder): the teacher has played its part.
  const keep = keptLayers(teacherBase.config.numHiddenLayers, layers);
  const student = subsetModel(teacherBase.config, teacherBase.weights, keep);
  const engine = new EmbeddedEngine(student.config, student.weights);
  const micro = 8;
  const order = new Rng(deriveSeed(seed, 2)).shuffle(requests.map((_, i) => i));
  const steps = Math.max(1, Math.ceil((epochs * requests.length) / micro));
  const batch = (step: number): ScoreRequest[] => Array.from({ length: micro }, (_, j) => requests[order[(step * micro + j) % order.length]!]!);
  const losses = await sft(engine, batch, { steps, lr, warmupRatio: 0.05, finalRatio: 0.1, weightDecay: 0, maxGradNorm: 1 }, (s, loss) => {
    if (s === 1 || s % 10 === 0 || s === steps) console.log(`[make-student] fit step ${s}/${steps}: loss ${loss.toFixed(3)}, ${Math.round((Date.now() - started) / 1000)} s`);
  });

  // 3. The folder: weights, the teacher's tokenizer files, and how it was made.
  mkdirSync(out, { recursive: true });
  saveBaseDir(student.config, student.weights, out);
  for (const f of TOKENIZER_FILES) if (existsSync(join(teacherDir, f))) copyFileSync(join(teacherDir, f), join(out, f));
  const source = {
    made_by: 'scripts/make-student.ts', teacher: teacherDir, config: configFile, layers_kept: keep, seed,
    teacher_episodes: played, teacher_correct: correct, replies: requests.length, fit_steps: steps, micro_batch: micro, lr,
    loss_first: losses[0], loss_last: losses[losses.length - 1], seconds: Math.round((Date.now() - started) / 1000),
  };
  writeFileSync(join(out, 'source.json'), JSON.stringify(source, null, 2) + '\n');
  await engine.dispose();
  console.log(JSON.stringify(source));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`[make-student] ${(err as Error).message}`);
    process.exit(1);
  });
}
