// `marft eval CONFIG --checkpoint DIR`: scores a checkpoint's agents on held-out problems;
// `marft eval CONFIG --base`: scores the untrained system alone (the prompt-only rows).
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listFlag, parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { loadConfig } from '../../config/load.ts';
import { TaskOptionError } from '../../tasks/options.ts';
import { loadCheckpoint } from '../../runs/checkpoint.ts';
import { openCheckpoint } from '../../runs/checkpoint-snapshot.ts';
import { DamagedRunError } from '../../runs/run-errors.ts';
import type { Engine } from '../../engine/types.ts';
import type { TaskBundle } from '../../train/task.ts';
import { configDifferences, fixedReason } from '../../runs/config-change.ts';
import type { MarftConfig } from '../../config/schema.ts';
import { basePolicies, evaluatePolicies, type EvalResult } from '../../train/evaluate.ts';
import { evalRecords, writeEvalRecords, type EvalProblemRecord, type EvaluatedSystem } from '../../train/eval-records.ts';
import type { Task } from '../../train/task.ts';
import { buildRun, buildSamplingModel, buildTask } from '../../run/setup.ts';
import { planFor } from '../../algorithms/check.ts';

const HELP = `usage: marft eval CONFIG --checkpoint DIR [--base] [--output FILE] [--set KEY=VALUE ...]
       marft eval CONFIG --base [--output FILE] [--set KEY=VALUE ...]

Decodes every held-out problem of CONFIG's task once per decoding seed (n = eval.seeds, at the
decoding of eval.protocol / eval.temperature, topP, topK; docs/training.md) with the agents of
checkpoint DIR (a RUN/checkpoints/step-N folder, or a run folder: its latest checkpoint), and prints
a table and one JSON line {"score", "perSeed", "passAtK", "problems", "step", "checkpoint",
"protocol", "sampling"}: score is the mean of the per-seed averages, passAtK[k-1] the unbiased
pass@k for k = 1..n. --base also scores the untrained system (its score as "base"); without
--checkpoint it scores only the untrained system (every agent acting with the frozen base: the
prompt-only rows, docs/algorithms.md), with "step": null and "base": true; that model may be a
served one (model.engine openai: a running OpenAI-compatible server at model.url; vllm: a vLLM
server marft starts on model.path; docs/scaling.md).
--output FILE writes one JSON line per problem (and system): the problem, each decoding seed's
episode (each agent's text per turn, the feedback, the verdict, the score), the per-seed scores and
the problem's pass@k; marft show FILE prints it (docs/training.md, "marft eval --output").
--set KEY=VALUE changes one key of CONFIG (repeatable; VALUE is YAML, validated like the file),
e.g. --set eval.seeds=1 --set eval.problems=100.`;

/** Refuses an --output that cannot be written before hours of decoding, not after. */
function checkOutput(file: string | undefined): void {
  if (file === undefined) return;
  if (file === '') throw new UserError('--output needs a file, got an empty value');
  if (existsSync(file) && statSync(file).isDirectory()) throw new UserError(`--output ${file}: is a folder, not a file`);
  const folder = dirname(resolve(file));
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new UserError(`--output ${file}: no such folder ${folder}`);
}

interface ScoredSystem {
  system: EvaluatedSystem;
  result: EvalResult;
}

const fmt = (x: number | undefined): string => (x === undefined ? '-' : x.toFixed(4));

/** The table of the scored systems: score, pass@1, pass@n (n > 1 seeds only: with one seed it is pass@1 again) and the per-seed averages. */
function printTable(rows: readonly ScoredSystem[]): void {
  const n = rows[0]!.result.seeds.length;
  const passN = n > 1 ? ` ${`pass@${n}`.padStart(7)}` : '';
  console.log(`${'system'.padEnd(12)} ${'score'.padStart(7)} ${'pass@1'.padStart(7)}${passN}  per seed`);
  for (const { system, result } of rows) {
    const atN = n > 1 ? ` ${fmt(result.passAtK[n - 1]).padStart(7)}` : '';
    console.log(`${system.name.padEnd(12)} ${fmt(result.score).padStart(7)} ${fmt(result.passAtK[0]).padStart(7)}${atN}  ${result.perSeed.map((x) => x.toFixed(3)).join(' ')}`);
  }
}

/** The JSON summary line's common keys. */
function summaryOf(r: EvalResult): Record<string, unknown> {
  return { score: r.score, perSeed: r.perSeed, passAtK: r.passAtK, problems: r.problems, protocol: r.protocol, sampling: r.sampling };
}

async function writeOutput(file: string | undefined, task: Task, rows: readonly ScoredSystem[]): Promise<void> {
  if (file === undefined) return;
  const records: EvalProblemRecord[] = rows.flatMap(({ system, result }) => evalRecords(result, task, system));
  try {
    await writeEvalRecords(file, records);
  } catch (err) {
    throw new UserError(`cannot write --output ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

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
/** Loads the checkpoint (from `dir`: its snapshot) into the engine; a checkpoint that does not fit the configuration is one line naming `ckpt`. */
async function loadInto(engine: Engine, taskVocab: number, ckpt: string, dir: string, file: string): Promise<void> {
  const vocab = engine.info.vocabSize;
  if (vocab < taskVocab) throw new UserError(`${file} does not fit the checkpoint ${ckpt}: its task needs a vocabulary of ${taskVocab} ids, the model has ${vocab} (task.options or model.path differ from the run's)`);
  try {
    await loadCheckpoint(engine, dir, { optimiser: false, checked: true });
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
  const parsed = parseArgs(args, { string: ['checkpoint', 'output'], repeatable: ['set'], boolean: ['base'] });
  const [file, ...extra] = parsed.positionals;
  if (!file || extra.length > 0) throw new UserError('expected exactly one CONFIG file (see --help)');
  const given = stringFlag(parsed, 'checkpoint');
  if (!given && !parsed.flags.has('base')) throw new UserError('--checkpoint is required (or --base alone, to score the untrained system)');
  const output = stringFlag(parsed, 'output');
  checkOutput(output);
  const keepEpisodes = output !== undefined;
  const untrained: EvaluatedSystem = { name: 'untrained', step: null, checkpoint: null };
  try {
    if (!given) {
      const config = await loadConfig(file, listFlag(parsed, 'set'));
      // The untrained system may be a served model (model.engine openai or vllm): it only samples.
      const bundle = await buildTask(config);
      const engine = await buildSamplingModel(config, bundle);
      const base = await evaluatePolicies(engine, bundle.task, config, basePolicies(bundle.task), { keepEpisodes }).finally(() => engine.dispose());
      const rows = [{ system: untrained, result: base }];
      await writeOutput(output, bundle.task, rows);
      printTable(rows);
      console.log(JSON.stringify({ ...summaryOf(base), step: null, base: true }));
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
      await loadInto(engine, bundle.vocabSize, ckpt, snapshot.dir, file).catch(async (err: unknown) => {
        await engine.dispose();
        throw err;
      });
    } finally {
      // Everything is loaded (engines read a checkpoint's files when it is loaded): the trainer may remove it now.
      await snapshot.close();
    }
    try {
      const plan = planFor(config, bundle.task);
      const rows: ScoredSystem[] = [];
      if (parsed.flags.has('base')) rows.push({ system: untrained, result: await evaluatePolicies(engine, bundle.task, config, basePolicies(bundle.task), { keepEpisodes }) });
      const result = await evaluatePolicies(engine, bundle.task, config, plan.policies, { keepEpisodes });
      rows.push({ system: { name: `step ${state.step}`, step: state.step, checkpoint: ckpt }, result });
      await writeOutput(output, bundle.task, rows);
      printTable(rows);
      console.log(JSON.stringify({ ...summaryOf(result), step: state.step, checkpoint: ckpt, ...(rows.length > 1 ? { base: rows[0]!.result.score } : {}) }));
    } finally {
      await engine.dispose();
    }
    return 0;
  } catch (err) {
    // A task's option that does not fit the model shows up only once the engine exists (a
    // ConfigError, a syntax error's code frame included, goes to the dispatcher as it is).
    if (err instanceof TaskOptionError) throw new UserError(err.message);
    throw err;
  }
}
