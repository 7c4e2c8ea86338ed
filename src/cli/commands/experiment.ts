// `marft experiment FILE`: trains and evaluates every row × seed × column of an experiment file and
// writes the table (docs/experiments.md). The work is src/experiments/; this file reads the flags.
import { resolve } from 'node:path';
import { listFlag, parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { quickExperiment, readExperimentFile, selectRows, selectSeeds, validateExperiment } from '../../experiments/experiment-file.ts';
import { checkModelFolders } from '../../experiments/folder-check.ts';
import { ExperimentInterrupted, interruptExperiment } from '../../experiments/marft-child.ts';
import { planExperiment, planText, runExperiment, writeOutputs } from '../../experiments/runner.ts';
import { tableMarkdown } from '../../experiments/table.ts';
import { signalExitCode, watchStop, type StopSignal } from '../../runs/stop-signal.ts';

const HELP = `usage: marft experiment FILE [--quick] [--out DIR] [--rows a,b] [--set KEY=VALUE ...] [--dry-run | --table]

Runs the experiment FILE (YAML, docs/experiments.md): for every row and training seed, a run folder
DIR/runs/<row>/seed-<s> trained by marft train (resumed when half-finished, skipped when finished;
base rows are not trained), evaluated by marft eval on every column; each result is appended to
DIR/results.jsonl as soon as it exists and never recomputed. Stop it at any point and run the same
command again: it continues. At the end DIR/table.md and DIR/table.json hold one row per experiment
row, one column per benchmark plus the average: mean ± sample std (n − 1) over training seeds, and n;
DIR/results.json the same numbers per method and benchmark with each seed's value and pass@k; and
DIR/curves/<column>.svg each row's training reward and held-out score (docs/experiments.md).
Progress (cells done of the total, elapsed time, time left) goes to stderr.

  --quick            the file's smaller grid (its quick section: fewer seeds, smaller budgets, the
                     same rows and columns), named <name>-quick
  --out DIR          where runs, results and the table go (default: runs/experiments/<name>, with
                     --quick runs/experiments/<name>-quick)
  --rows a,b         only these rows (the table still lists every row; missing cells say so)
  --seeds a,b        only these training seeds of each row (a grid run a few seeds at a time and
                     completed later on the same --out; the table still counts every planned seed)
  --set KEY=VALUE    change one configuration key of every row (repeatable; after the file's own
                     set), e.g. --set model.path=PATH/TO/MODEL
  --dry-run          check the file (every configuration loads, every model.path and MAS-OPD
                     teacher.path is a model folder) and print the plan: runs (row × seed; base
                     rows train nothing), evaluations (run × column), what is already done
  --table            write the table, results.json and curves from DIR/results.jsonl (and the runs'
                     metrics) alone, training and evaluating nothing`;

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['out', 'rows', 'seeds'], repeatable: ['set'], boolean: ['dry-run', 'table', 'quick'] });
  const [file, ...extra] = parsed.positionals;
  if (!file || extra.length > 0) throw new UserError('expected exactly one experiment FILE (see --help)');
  if (parsed.flags.has('dry-run') && parsed.flags.has('table')) throw new UserError('--dry-run and --table are two different things: give one');
  const read = await readExperimentFile(file);
  const exp = parsed.flags.has('quick') ? quickExperiment(read) : read;
  const out = stringFlag(parsed, 'out') ?? `runs/experiments/${exp.name}`;
  if (out === '') throw new UserError('--out needs a folder, got an empty value');
  if (parsed.flags.has('table')) {
    const table = await writeOutputs(exp, out);
    process.stdout.write(tableMarkdown(table));
    return 0;
  }
  const rowsFlag = stringFlag(parsed, 'rows');
  const rows = selectSeeds(selectRows(exp, rowsFlag === undefined ? undefined : rowsFlag.split(',').map((s) => s.trim()).filter((s) => s !== '')), stringFlag(parsed, 'seeds'));
  const sets = listFlag(parsed, 'set');
  await validateExperiment({ ...exp, rows }, sets);
  await checkModelFolders(exp, rows, sets);
  const opts = { out, rows, sets };
  if (parsed.flags.has('dry-run')) {
    console.log(planText(exp, await planExperiment(exp, opts), out));
    return 0;
  }
  // An interrupted experiment stops its child too (rather than leave a run training unattended) and
  // releases its lock on the way out, so that the next call finds everything free to continue. Its
  // parent going away (npx stopped) is a SIGHUP, as for marft train (src/runs/stop-signal.ts); a
  // second request ends it at once, and its child stops on seeing its parent gone.
  const stop = watchStop({
    onFirst: (request) => interruptExperiment(request.signal),
    atOnce: (signal) => console.error(`marft experiment: stopped at once by ${signal}, a second request to stop; run the same command again to continue`),
  });
  try {
    const table = await runExperiment(exp, opts);
    process.stdout.write(tableMarkdown(table));
    console.log(JSON.stringify({ out: resolve(out), table: resolve(out, 'table.md') }));
    return 0;
  } catch (err) {
    if (!(err instanceof ExperimentInterrupted)) throw err;
    const why = stop.request()?.parentGone ? 'because the process that started marft went away (taken as SIGHUP)' : `by ${err.signal}`;
    console.error(`marft experiment: stopped ${why}; run the same command again to continue`);
    return signalExitCode(err.signal as StopSignal);
  } finally {
    stop.dispose();
  }
}
