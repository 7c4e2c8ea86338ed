// `marft eval CONFIG --checkpoint DIR`: scores a checkpoint's agents on held-out problems;
// `marft eval CONFIG --base`: scores the untrained system alone (the prompt-only rows).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listFlag, parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { loadConfig } from '../../config/load.ts';
import { TaskOptionError } from '../../tasks/options.ts';
import { latestCheckpoint, loadCheckpoint, readCheckpointState } from '../../runs/checkpoint.ts';
import { DamagedRunError } from '../../runs/run-errors.ts';
import type { Engine } from '../../engine/types.ts';
import { configDifferences, fixedReason } from '../../runs/config-change.ts';
import type { MarftConfig } from '../../config/schema.ts';
import { basePolicies, evaluatePolicies } from '../../train/evaluate.ts';
import { buildRun, buildSamplingModel, buildTask } from '../../run/setup.ts';
import { planFor } from '../../algorithms/check.ts';

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

/**
 * Loads the checkpoint's adapters and critics into `engine`. A checkpoint whose shapes are not the
 * model's (another model.path, task options that build another model) is one line saying so: the
 * keys checkFits lets differ can still change what the checkpoint must fit.
 */
async function loadInto(engine: Engine, taskVocab: number, ckpt: string, file: string): Promise<void> {
  const vocab = engine.info.vocabSize;
  if (vocab < taskVocab) throw new UserError(`${file} does not fit the checkpoint ${ckpt}: its task needs a vocabulary of ${taskVocab} ids, the model has ${vocab} (task.options or model.path differ from the run's)`);
  try {
    await loadCheckpoint(engine, ckpt, { optimiser: false });
  } catch (err) {
    if (err instanceof DamagedRunError) throw err;
    throw new UserError(`${file} does not fit the checkpoint ${ckpt}: ${(err as Error).message.split('\n')[0]} (model.path or task.options differ from the run's?)`);
  }
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
    let ckpt = resolve(given!);
    if (!existsSync(ckpt)) throw new UserError(`--checkpoint ${given}: no such folder`);
    if (!existsSync(join(ckpt, 'state.json'))) {
      const latest = await latestCheckpoint(ckpt);
      if (!latest) throw new UserError(`${given} is neither a checkpoint (no state.json) nor a run folder with checkpoints`);
      ckpt = latest;
    }
    const state = await readCheckpointState(ckpt);
    checkFits(file, ckpt, state.config, config);
    const runDir = dirname(dirname(ckpt));
    const { engine, bundle } = await buildRun(config, existsSync(join(runDir, 'base')) ? runDir : undefined);
    try {
      await loadInto(engine, bundle.vocabSize, ckpt, file);
    } catch (err) {
      await engine.dispose();
      throw err;
    }
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
    await engine.dispose();
    return 0;
  } catch (err) {
    // A task's option that does not fit the model shows up only once the engine exists (a
    // ConfigError, a syntax error's code frame included, goes to the dispatcher as it is).
    if (err instanceof TaskOptionError) throw new UserError(err.message);
    throw err;
  }
}
