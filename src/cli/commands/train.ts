// `marft train CONFIG --run-dir DIR` and `marft train --resume DIR`: MARFT training runs.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { loadConfig, parseConfig } from '../../config/load.ts';
import { ConfigError } from '../../config/schema-dsl.ts';
import { TaskOptionError } from '../../rl/task-options.ts';
import type { MarftConfig } from '../../config/schema.ts';
import { latestCheckpoint, writeFileAtomic } from '../../rl/checkpoint.ts';
import { buildRun } from '../../rl/run-setup.ts';
import { train } from '../../rl/trainer.ts';

export const summary = 'train a multi-agent system with MARFT (CONFIG --run-dir DIR, or --resume DIR)';

const HELP = `usage: marft train CONFIG --run-dir DIR [--no-progress]
       marft train --resume DIR [--no-progress]

Trains the agents of CONFIG (YAML or JSON, see docs/config.md) with the configured algorithm.
DIR receives config.json (the resolved configuration), metrics.jsonl (one JSON line per step) and
checkpoints/ (adapters, critic, optimiser state, step; written atomically). --resume continues a
run from its last checkpoint with the metrics an uninterrupted run would have produced.`;

async function readRunConfig(dir: string): Promise<MarftConfig> {
  const file = join(dir, 'config.json');
  if (!existsSync(file)) throw new UserError(`${dir} is not a run folder (no config.json)`);
  return parseConfig(JSON.parse(await readFile(file, 'utf8')));
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['run-dir', 'resume'], boolean: ['no-progress'] });
  const resumeDir = stringFlag(parsed, 'resume');
  let runDir: string;
  let config: MarftConfig;
  try {
    if (resumeDir) {
      if (parsed.positionals.length > 0) throw new UserError('--resume takes the run folder only (its config.json is used)');
      runDir = resolve(resumeDir);
      config = await readRunConfig(runDir);
    } else {
      const [file, ...extra] = parsed.positionals;
      if (!file || extra.length > 0) throw new UserError('expected exactly one CONFIG file (see --help)');
      const dir = stringFlag(parsed, 'run-dir');
      if (!dir) throw new UserError('--run-dir is required (or --resume DIR)');
      runDir = resolve(dir);
      config = await loadConfig(file);
      if (await latestCheckpoint(runDir)) throw new UserError(`${runDir} already holds a run with checkpoints; continue it with --resume ${dir} or choose a new --run-dir`);
      await mkdir(runDir, { recursive: true });
      await writeFileAtomic(join(runDir, 'config.json'), JSON.stringify(config, null, 2));
    }
    const { engine, bundle } = await buildRun(config, runDir);
    const result = await train({ config, engine, task: bundle.task, runDir, progress: parsed.flags.has('no-progress') ? false : undefined });
    const last = result.metrics[result.metrics.length - 1];
    console.log(JSON.stringify({ runDir, steps: result.metrics.length, resumedFrom: result.resumedFrom, checkpoint: result.checkpoint, score_mean: last?.score_mean ?? null }));
    await engine.dispose();
    return 0;
  } catch (err) {
    // A task's option that does not fit the model shows up only once the engine exists.
    if (err instanceof ConfigError || err instanceof TaskOptionError) throw new UserError(err.message);
    throw err;
  }
}
