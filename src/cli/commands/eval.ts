// `marft eval CONFIG --checkpoint DIR`: scores a checkpoint's agents on held-out problems;
// `marft eval CONFIG --base`: scores the untrained system alone (the prompt-only rows).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listFlag, parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { loadConfig } from '../../config/load.ts';
import { ConfigError } from '../../config/schema-dsl.ts';
import { TaskOptionError } from '../../tasks/options.ts';
import { loadCheckpoint } from '../../runs/checkpoint.ts';
import { openCheckpoint } from '../../runs/checkpoint-snapshot.ts';
import type { Engine } from '../../engine/types.ts';
import type { TaskBundle } from '../../train/task.ts';
import { configDifferences, fixedReason } from '../../runs/config-change.ts';
import type { MarftConfig } from '../../config/schema.ts';
import { basePolicies, evaluatePolicies } from '../../train/evaluate.ts';
import { buildRun, buildSamplingModel, buildTask } from '../../run/setup.ts';
import { planFor } from '../../train/loop.ts';

export const summary = 'score a checkpoint, or the untrained system, on held-out problems (CONFIG --checkpoint DIR [--base] | CONFIG --base)';

const HELP = `usage: marft eval CONFIG --checkpoint DIR [--base] [--set KEY=VALUE ...]
       marft eval CONFIG --base [--set KEY=VALUE ...]

Decodes every held-out problem of CONFIG's task once per evaluation seed (eval.seeds, at
eval.temperature) with the agents of checkpoint DIR (a RUN/checkpoints/step-N folder, or a run
folder: its latest checkpoint), and prints a table and one JSON line
{"score", "perSeed", "problems", "step", "checkpoint"}. --base also scores the untrained system;
without --checkpoint it scores only the untrained system (every agent acting with the frozen base:
the prompt-only rows, docs/algorithms.md) and prints {"score", "perSeed", "problems", "base": true};
that model may be a served one (model.engine openai: a running OpenAI-compatible server at model.url;
vllm: a vLLM server marft starts on model.path; docs/scaling.md).
--set KEY=VALUE changes one key of CONFIG (repeatable; VALUE is YAML, validated like the file),
e.g. --set eval.seeds=1 --set eval.problems=100.`;

/**
 * Refuses a CONFIG that differs from the checkpoint's own configuration in a key that defines what
 * the checkpoint holds (the algorithm's trainables, the model, the adapters' shapes), which would
 * otherwise fail deep inside loading or decoding. The seed (evaluation seeds do not derive from it),
 * the model folder's path (it may have moved) and the task's options (another held-out set) may differ.
 */
function checkFits(file: string, ckpt: string, trained: MarftConfig | undefined, config: MarftConfig): void {
  if (!trained) return;
  const free = (key: string): boolean => key === 'seed' || key === 'model.path' || key.startsWith('task.options.');
  const fixed = configDifferences(trained, config).filter((d) => !free(d.key) && fixedReason(d.key) !== null);
  if (fixed.length === 0) return;
  const listed = fixed.map((d) => `${d.key} ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`).join(', ');
  throw new UserError(`${file} does not fit the checkpoint ${ckpt}: it differs from the configuration the checkpoint was trained with in ${listed} (${fixed[0]!.key}: ${fixedReason(fixed[0]!.key)})`);
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['checkpoint'], repeatable: ['set'], boolean: ['base'] });
  const [file, ...extra] = parsed.positionals;
  if (!file || extra.length > 0) throw new UserError('expected exactly one CONFIG file (see --help)');
  const given = stringFlag(parsed, 'checkpoint');
  if (!given && !parsed.flags.has('base')) throw new UserError('--checkpoint is required (or --base alone, to score the untrained system)');
  try {
    if (!given) {
      const config = await loadConfig(file, listFlag(parsed, 'set'));
      // The untrained system may be a served model (model.engine openai or vllm): it only samples.
      const bundle = await buildTask(config);
      const engine = await buildSamplingModel(config, bundle);
      const base = await evaluatePolicies(engine, bundle.task, config, basePolicies(bundle.task)).finally(() => engine.dispose());
      console.log(`${'system'.padEnd(12)} ${'score'.padStart(7)}  per seed`);
      console.log(`${'untrained'.padEnd(12)} ${base.score.toFixed(4).padStart(7)}  ${base.perSeed.map((x) => x.toFixed(3)).join(' ')}`);
      console.log(JSON.stringify({ score: base.score, perSeed: base.perSeed, problems: base.problems, base: true }));
      return 0;
    }
    const config = await loadConfig(file, listFlag(parsed, 'set'));
    const target = resolve(given!);
    if (!existsSync(target)) throw new UserError(`--checkpoint ${given}: no such folder`);
    // A snapshot that stays whole while the run goes on training (src/runs/checkpoint-snapshot.ts).
    const snapshot = await openCheckpoint(target);
    if (!snapshot) throw new UserError(`${given} is neither a checkpoint (no state.json) nor a run folder with checkpoints`);
    const { state, source: ckpt } = snapshot;
    let engine: Engine;
    let bundle: TaskBundle;
    try {
      checkFits(file, ckpt, state.config, config);
      const runDir = dirname(dirname(ckpt));
      ({ engine, bundle } = await buildRun(config, existsSync(join(runDir, 'base')) ? runDir : undefined));
      await loadCheckpoint(engine, snapshot.dir, { optimiser: false, checked: true }).catch(async (err: unknown) => {
        await engine.dispose();
        throw err;
      });
    } finally {
      // Everything is loaded (engines read a checkpoint's files when it is loaded): the trainer may remove it now.
      await snapshot.close();
    }
    try {
      const plan = planFor(config, bundle.task);
      const rows: [string, number, number[]][] = [];
      if (parsed.flags.has('base')) {
        const base = await evaluatePolicies(engine, bundle.task, config, basePolicies(bundle.task));
        rows.push(['untrained', base.score, base.perSeed]);
      }
      const result = await evaluatePolicies(engine, bundle.task, config, plan.policies);
      rows.push([`step ${state.step}`, result.score, result.perSeed]);
      console.log(`${'system'.padEnd(12)} ${'score'.padStart(7)}  per seed`);
      for (const [name, score, perSeed] of rows) console.log(`${name.padEnd(12)} ${score.toFixed(4).padStart(7)}  ${perSeed.map((x) => x.toFixed(3)).join(' ')}`);
      console.log(JSON.stringify({ score: result.score, perSeed: result.perSeed, problems: result.problems, step: state.step, checkpoint: ckpt, ...(rows.length > 1 ? { base: rows[0]![1] } : {}) }));
    } finally {
      await engine.dispose();
    }
    return 0;
  } catch (err) {
    // A task's option that does not fit the model shows up only once the engine exists.
    if (err instanceof ConfigError || err instanceof TaskOptionError) throw new UserError(err.message);
    throw err;
  }
}
