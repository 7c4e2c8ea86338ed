// The model folders an experiment's runs will open (model.path; teacher.path for a MAS-OPD row),
// checked before anything runs: a path mistyped in the experiment file or its --set would otherwise
// fail only when its first child starts (for a column, after hours of training), and --dry-run would
// pass without them.
import type { MarftConfig } from '../config/schema.ts';
import { modelFolderProblem } from '../run/model-folder.ts';
import { taskBuildsTeacher } from '../run/task-registry.ts';
import { evaluationSets, loadFor, trainingSets, type Experiment, type ExperimentRow } from './experiment-file.ts';
import { ExperimentError } from './experiment-error.ts';

/** `KEY: PATH: problem` for each folder `config` names that is not a model folder. */
function folderProblems(config: MarftConfig, training: boolean): string[] {
  const out: string[] = [];
  const check = (key: string, path: string): void => {
    const problem = modelFolderProblem(path);
    if (problem) out.push(`${key}: ${path}: ${problem}`);
  };
  if (config.model.path) check('model.path', config.model.path);
  // The teacher scores training steps only; an evaluation never opens it.
  if (training && config.algorithm === 'mas-opd' && config.teacher.engine !== 'tabular') {
    if (config.teacher.path) check('teacher.path', config.teacher.path);
    else if (config.teacher.engine === 'embedded' && taskBuildsTeacher(config.task.name)) {
      // The task builds its own teacher (arith-pair).
    } else out.push('teacher.path: algorithm mas-opd needs the teacher\'s Hugging Face model folder');
  }
  return out;
}

/**
 * Throws one line for the first configuration of `rows` (training, and every column's evaluation,
 * under the first seed: the seed changes no path) that names a missing model or teacher folder, with
 * how many more do. Paths are relative to the working folder, as the runs' `marft` children see them.
 */
export async function checkModelFolders(exp: Experiment, rows: readonly ExperimentRow[], cliSets: readonly string[]): Promise<void> {
  const problems: string[] = [];
  for (const row of rows) {
    const seed = row.seeds[0]!;
    if (!row.base) for (const p of folderProblems(await loadFor(`row ${row.name}`, row.config, trainingSets(exp, row, seed, cliSets)), true)) problems.push(`row ${row.name}: ${p}`);
    for (const column of exp.columns) {
      const config = await loadFor(`row ${row.name} × column ${column.name}`, row.config, evaluationSets(exp, row, column, seed, cliSets));
      for (const p of folderProblems(config, false)) problems.push(`row ${row.name} × column ${column.name}: ${p}`);
    }
  }
  if (problems.length === 0) return;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more configuration${problems.length > 2 ? 's' : ''} of this experiment naming a missing folder)` : '';
  throw new ExperimentError(`${problems[0]}${more}; give the folder in the experiment file or with --set KEY=PATH`);
}
