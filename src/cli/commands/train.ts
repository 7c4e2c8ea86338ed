// `marft train CONFIG --run-dir DIR` and `marft train --resume DIR`: MARFT training runs.
import { existsSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { listFlag, parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { loadConfig } from '../../config/load.ts';
import { TaskOptionError } from '../../tasks/options.ts';
import type { MarftConfig } from '../../config/schema.ts';
import { latestCheckpoint, writeFileAtomic } from '../../runs/checkpoint.ts';
import { stderrNotice } from '../../core/notice.ts';
import { acquireRunLock, type RunLock } from '../../runs/run-lock.ts';
import { assertRunFolder, folderKind, markRunFolder } from '../../runs/run-folder.ts';
import { RunStopped, signalExitCode, watchStop, type StopRequest } from '../../runs/stop-signal.ts';
import { WriteFailedError, writing } from '../../runs/write-errors.ts';
import { MemoryExhaustedError } from '../../runs/memory-errors.ts';
import { assertTrainableModel, buildEngine, buildTask } from '../../run/setup.ts';
import { SamplerMismatchError } from '../../engine/index.ts';
import type { SamplingEngine } from '../../engine/types.ts';
import { openTeacher } from '../../run/teacher.ts';
import { train } from '../../run/train.ts';
import { planFor } from '../../algorithms/check.ts';

const HELP = `usage: marft train CONFIG --run-dir DIR [--set KEY=VALUE ...] [--no-eval] [--no-progress] [--outlive-parent]
       marft train --resume DIR [--set KEY=VALUE ...] [--accept-config-change] [--no-eval] [--no-progress] [--outlive-parent]

Trains the agents of CONFIG (YAML or JSON, see docs/config.md) with the configured algorithm
(algorithm: mas-opd distils them from the model at teacher.path, docs/mas-opd.md).
DIR receives config.json (the resolved configuration), metrics.jsonl (one JSON line per step),
evaluations.json (the held-out score before the first step and after the last), checkpoints/
(adapters, critic, optimiser state, step; written atomically) and what log.to asks for
(tensorboard/, metrics.csv). Progress goes to stderr: a bar on a terminal, otherwise a plain line
every log.every steps or log.everySeconds. The last stdout line is JSON: runDir, steps, resumedFrom,
checkpoint, score_mean (the last step's), eval_before and eval_after (held-out scores). --resume
continues a run from its last checkpoint with the metrics an uninterrupted run would have produced.
DIR must be new, empty, or a run folder; a folder that holds anything else is refused.

Ctrl-C, SIGTERM or SIGHUP (or the process that started marft going away) stops the run cleanly: the
step in flight is finished and checkpointed, and one line says how to resume; the exit status is
128 + the signal's number (130, 143, 129). A second signal stops at once, losing the step in flight.

  --set KEY=VALUE           change one key of the configuration (repeatable), e.g. --set
                            actor.optim.lr=3e-4 --set policy.targetModules=[q_proj,v_proj]; VALUE is
                            YAML, and is validated like the file
  --accept-config-change    with --resume: continue with a configuration that differs from the
                            checkpoint's (an edited config.json); --set implies it. The change is
                            recorded in DIR/config-changes.jsonl
  --no-eval                 skip the held-out scoring before the first step and after the last
                            (no evaluations.json is written; eval_before and eval_after are null):
                            for a caller that scores the checkpoint itself, as marft experiment
                            does. Training is the same with or without it
  --no-progress             nothing on stderr while training (no bar, no progress lines)
  --outlive-parent          keep training when the process that started marft exits, and ignore
                            SIGHUP (for a run meant to go on alone, nohup-style)`;

/** The resumed run's configuration: its config.json, changed by the --set overrides. */
async function readRunConfig(dir: string, sets: string[]): Promise<MarftConfig> {
  if (!existsSync(dir)) throw new UserError(`--resume ${dir}: no such folder`);
  if ((await folderKind(dir)) === 'other') throw new UserError(`--resume ${dir}: not a marft run folder (it holds other files and no run)`);
  const file = join(dir, 'config.json');
  if (!existsSync(file)) throw new UserError(`${dir} is not a run folder (no config.json)`);
  return loadConfig(file, sets);
}

/** The run folder's lock (src/runs/run-lock.ts); a folder that cannot hold one (read-only, full) is the one line of src/runs/write-errors.ts. */
async function lockRun(dir: string): Promise<RunLock> {
  try {
    return await acquireRunLock(dir, stderrNotice);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code && !(err instanceof WriteFailedError)) throw new UserError(`${dir}: cannot take the run folder's lock (${code})`);
    throw err;
  }
}

/** Creates the run folder, or says in one line why it cannot be one (a file, a folder that holds something else, a disk that refuses). */
async function makeRunDir(dir: string, given: string): Promise<void> {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new UserError(`--run-dir ${given}: is a file, not a folder`);
  await assertRunFolder(dir, `--run-dir ${given}`);
  await writing(dir, () => mkdir(dir, { recursive: true }));
}

/** How to go on after a failure the user can fix (a full disk, a read-only folder). */
const resumeHint = (runDir: string): string =>
  existsSync(join(runDir, 'config.json')) ? `the run's checkpoints are intact: once that is fixed, continue with marft train --resume ${runDir}` : 'nothing was trained: once that is fixed, run the same command again';

/** The line of a run stopped on request: what stopped it, what is saved, how to go on. */
function stoppedLine(request: StopRequest, stopped: RunStopped, runDir: string): string {
  const why = request.parentGone ? 'because the process that started marft went away (taken as SIGHUP)' : `by ${request.signal}`;
  const saved = stopped.checkpoint ? `; every completed step is in ${relative(runDir, stopped.checkpoint) || stopped.checkpoint}` : '';
  return `stopped ${why} after step ${stopped.step}${saved}; resume with: marft train --resume ${runDir}`;
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['run-dir', 'resume'], repeatable: ['set'], boolean: ['no-progress', 'no-eval', 'accept-config-change', 'outlive-parent'] });
  const resumeDir = stringFlag(parsed, 'resume');
  const sets = listFlag(parsed, 'set');
  let runDir: string | undefined;
  let config: MarftConfig;
  // Taken before anything is written into the run folder (a second writer is refused before it can
  // rewrite config.json), handed to train(), released here.
  let lock: RunLock | undefined;
  // A clean stop on SIGINT/SIGTERM/SIGHUP or the parent's exit (src/runs/stop-signal.ts); the second request stops at once.
  const outlive = parsed.flags.has('outlive-parent');
  const stop = watchStop({
    watchParent: !outlive,
    ignoreHangup: outlive,
    onFirst: () => {
      if (process.stderr.isTTY) process.stderr.write('\nmarft train: stopping after the step in flight (it is checkpointed); press Ctrl-C again to stop at once\n');
    },
    atOnce: (signal) => {
      lock?.releaseSync();
      const where = runDir && existsSync(join(runDir, 'config.json')) ? `; it resumes from its last checkpoint: marft train --resume ${runDir}` : '';
      console.error(`marft train: stopped at once by ${signal}, a second request to stop: the step in flight is lost${where}`);
    },
  });
  try {
    if (resumeDir !== undefined) {
      if (resumeDir === '') throw new UserError('--resume needs a run folder, got an empty value');
      if (parsed.positionals.length > 0) throw new UserError('--resume takes the run folder only (its config.json is used; change keys with --set KEY=VALUE)');
      if (parsed.flags.has('run-dir')) throw new UserError('--resume DIR continues DIR: it takes no --run-dir');
      runDir = resolve(resumeDir);
      config = await readRunConfig(runDir, sets);
      assertTrainableModel(config);
      lock = await lockRun(runDir);
    } else {
      if (parsed.flags.has('accept-config-change')) throw new UserError('--accept-config-change goes with --resume DIR (a fresh run has no earlier configuration to differ from)');
      const [file, ...extra] = parsed.positionals;
      if (!file || extra.length > 0) throw new UserError('expected exactly one CONFIG file (see --help)');
      const dir = stringFlag(parsed, 'run-dir');
      if (!dir) throw new UserError('--run-dir is required (or --resume DIR)');
      const fresh = resolve(dir);
      config = await loadConfig(file, sets);
      // A served model (model.engine openai or vllm) cannot train: refused before the run folder is made.
      assertTrainableModel(config);
      await makeRunDir(fresh, dir);
      lock = await lockRun(fresh);
      if (await latestCheckpoint(fresh)) throw new UserError(`${fresh} already holds a run with checkpoints; continue it with --resume ${dir} or choose a new --run-dir`);
      await markRunFolder(fresh);
      await writeFileAtomic(join(fresh, 'config.json'), JSON.stringify(config, null, 2));
      runDir = fresh;
    }
    const bundle = await buildTask(config);
    // The algorithm's plan is checked before any engine starts (a torch worker, a vLLM server): a
    // configuration it refuses fails in its one line without waiting for them.
    planFor(config, bundle.task);
    const engine = await buildEngine(config, bundle, runDir);
    // Disposed on failure too: an engine's processes (the torch worker, a vLLM server) would
    // otherwise keep marft from exiting after its one-line error.
    let teacher: SamplingEngine | undefined;
    try {
      teacher = await openTeacher(config, bundle.task, bundle.buildTeacher);
      // --set on a resumed run is an explicit change of its configuration (recorded by the trainer).
      const acceptConfigChange = resumeDir !== undefined && (sets.length > 0 || parsed.flags.has('accept-config-change'));
      const result = await train({ config, engine, task: bundle.task, runDir, progress: parsed.flags.has('no-progress') ? false : undefined, evaluateBeforeAfter: !parsed.flags.has('no-eval'), acceptConfigChange, lock, stop: stop.signal, ...(teacher ? { teacher } : {}) });
      const last = result.metrics[result.metrics.length - 1];
      console.log(JSON.stringify({ runDir, steps: result.metrics.length, resumedFrom: result.resumedFrom, checkpoint: result.checkpoint, score_mean: last?.score_mean ?? null, eval_before: result.evalBefore?.score ?? null, eval_after: result.evalAfter?.score ?? null }));
    } finally {
      await engine.dispose();
      await teacher?.dispose();
    }
    return 0;
  } catch (err) {
    const request = stop.request();
    if (err instanceof RunStopped && request && runDir) {
      // The lock goes before the line, so that a resume started on reading it finds the folder free.
      await lock?.release();
      lock = undefined;
      console.error(`marft train: ${stoppedLine(request, err, runDir)}`);
      return signalExitCode(request.signal);
    }
    if (err instanceof WriteFailedError) throw new UserError(`${err.message}; ${runDir ? resumeHint(runDir) : 'nothing was written: once that is fixed, run the same command again'}`);
    if (err instanceof MemoryExhaustedError && runDir) {
      const smaller = Math.max(1, Math.floor(config!.train.microBatchTokens / 2));
      throw new UserError(`${err.message}; the run's checkpoints are intact: continue with e.g. marft train --resume ${runDir} --set train.microBatchTokens=${smaller}`);
    }
    // A task's option that does not fit the model shows up only once the engine exists (a
    // ConfigError, a syntax error's code frame included, goes to the dispatcher as it is).
    if (err instanceof TaskOptionError) throw new UserError(err.message);
    // vLLM serving an adapter differently from the trainer stops the run in one line (docs/scaling.md).
    if (err instanceof SamplerMismatchError) throw new UserError(err.message);
    throw err;
  } finally {
    stop.dispose();
    await lock?.release();
  }
}
