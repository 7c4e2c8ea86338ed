// Shared by the reliability tests: small runs of the coordination game on the tabular engine (or
// on a tiny embedded model the task builds), run in this process through buildRun and train.
import { parseConfig } from '../../src/config/load.ts';
import type { MarftConfig } from '../../src/config/schema.ts';
import { isTimingKey, type StepMetrics } from '../../src/runs/metrics-log.ts';
import { buildRun } from '../../src/run/setup.ts';
import { train, type TrainOptions, type TrainResult } from '../../src/run/train.ts';

type Tree = Record<string, unknown>;

function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b) ? merge(b as Tree, v as Tree) : v;
  }
  return out;
}

/** Action-level MARFT on the 4-symbol coordination game, tabular engine, 12 steps, a checkpoint every 3. */
export function tabularConfig(over: Tree = {}): MarftConfig {
  return parseConfig(merge({
    algorithm: 'marft-action', seed: 3,
    task: { name: 'coordination-game', options: { symbols: 4, dependency: true } },
    model: { engine: 'tabular' },
    actor: { klCoef: 0, optim: { lr: 0.1 } }, critic: { optim: { lr: 0.1 } },
    rollout: { batchSize: 32, maxNewTokens: 1 }, train: { steps: 12, checkpointEvery: 3 },
  }, over));
}

/** The same game on a tiny embedded decoder (hidden 8) the task builds and saves to RUN/base; LoRA rank 2, MLP critic. */
export function embeddedConfig(over: Tree = {}): MarftConfig {
  return tabularConfig(merge({
    task: { options: { hiddenSize: 8 } }, model: { engine: 'embedded' },
    policy: { loraRank: 2, loraAlpha: 4 }, critic: { kind: 'mlp', mlpHidden: [8], optim: { lr: 0.01 } }, actor: { optim: { lr: 0.01 } },
    rollout: { batchSize: 8 }, train: { steps: 3, checkpointEvery: 1 },
  }, over));
}

/** Notices collected instead of printed. */
export function noticeLog(): { notices: string[]; notice: (m: string) => void } {
  const notices: string[] = [];
  return { notices, notice: (m) => notices.push(m) };
}

/** Builds the run's task and engine (in `runDir`) and trains; the engine is disposed afterwards. */
export async function runIn(runDir: string, config: MarftConfig, options: Partial<TrainOptions> & { notice?: (m: string) => void } = {}): Promise<TrainResult> {
  const notice = options.notice ?? (() => undefined);
  const { engine, bundle } = await buildRun(config, runDir, notice);
  try {
    return await train({ config, engine, task: bundle.task, runDir, progress: false, ...options, notice });
  } finally {
    await engine.dispose();
  }
}

/** Metrics without their timings (which depend on the clock). */
export function untimed(metrics: StepMetrics[]): StepMetrics[] {
  return metrics.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !isTimingKey(k))));
}
