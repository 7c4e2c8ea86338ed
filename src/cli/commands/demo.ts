// `marft demo`: builds a tiny model, trains a Planner → Solver team with MARFT and shows the
// held-out improvement (src/demo/run-demo.ts). `npm run demo` runs it with the defaults.
// `marft demo mas-opd`: the MAS-OPD study (src/demo/mas-opd/run-study.ts).
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { numberFlag, parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { FULL_SETTINGS, QUICK_SETTINGS, finalJson, runDemo } from '../../demo/run-demo.ts';
import { FULL_STUDY, QUICK_STUDY, runStudy, STUDY_VARIANTS, type StudyVariant, studyJson } from '../../demo/mas-opd/run-study.ts';

const HELP = `usage: marft demo [--run-dir DIR] [--seed N] [--quick] [--ablation | --no-ablation]
       marft demo mas-opd [--run-dir DIR] [--seed N] [--quick] [--ablation | --no-ablation]

demos:
  (default)   MARFT: a Planner → Solver team trained from scratch (below)
  mas-opd     MAS-OPD: students distilled from a teacher built here, on the Reasoner–Tool-User pair
              (see marft demo mas-opd --help)

Builds a tiny Qwen2-shaped model (0.43M parameters) on this machine, pretrains it on an imperfect
teacher's transcripts of two-step arithmetic, and trains the Planner → Solver team's LoRA adapters
with action-level MARFT. Prints the held-out accuracy (greedy, problems never trained on) of the
untrained and trained teams, saves a reward-per-step plot (PNG), the model (Hugging Face format),
the adapters (PEFT format) and metrics into the run folder, and ends with one JSON line
{"before", "after", "improvement", ..., "criticExplainedVariance"}. About 3 minutes on 2 cores.

  --run-dir DIR     where everything is written (default runs/demo-<date>-<time>; must be empty)
  --seed N          run seed (default 0)
  --quick           smaller budgets (used by the tests): 20 RL steps of 32 problems, 500 held-out problems
  --ablation        also train, with the same budget: both agents with the critic's values replaced by
                    the batch mean (the critic's contribution), only the Planner, only the Solver
                    (about 2.5 times the demo's time)
  --no-ablation     skip those teams (the default)`;

const MAS_OPD_HELP = `usage: marft demo mas-opd [--run-dir DIR] [--seed N] [--quick] [--ablation | --no-ablation] [--runs LIST] [--teacher-conditions own|both]

Builds two Qwen2-shaped models on this machine: a teacher trained on correct, role-conditioned
transcripts of the Reasoner–Tool-User pair (verdict lines and what follows them included) and a
smaller students' base trained on imperfect ones; then trains one LoRA adapter per role with MAS-OPD
(the teacher scores the students' own rollouts in the real maths environment; RAS and PAC on).
Prints the held-out team accuracy (greedy, problems never trained on) of the students before and
after and of the teacher, and ends with one JSON line {"before", "after", "teacher", ...}.
About 5.5 minutes on 2 cores (328 s measured, docs/mas-opd.md).

  --run-dir DIR     where metrics, adapters and results.json go (default runs/mas-opd-<date>-<time>; must be empty)
  --seed N          run seed (default 0)
  --quick           tiny budgets (used by the tests; the numbers mean nothing)
  --ablation        also the same budget without RAS (λ = 0) and without PAC, 3 seeds each, side by side
                    (9 MAS-OPD runs in one process instead of 1, each about 1-3 minutes)
  --no-ablation     skip them (the default)
  --runs LIST       run exactly these MAS-OPD runs, e.g. full:1,no-ras:0,no-pac:2 (variants full, no-ras,
                    no-pac), on the teacher and base built from --seed: splits the ablation over processes
                    (two side by side ran its 8 extra runs in 12.5 minutes on 2 cores)
  --teacher-conditions own|both
                    own (default): the teacher learns each seat under its own role's condition; both: also
                    under the other role's, replying as that role would, so that RAS's contrast pass reads
                    a context the teacher was trained on (docs/mas-opd.md, "RAS with a teacher that learned
                    both conditions")`;

function defaultRunDir(prefix = 'demo'): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `runs/${prefix}-${stamp}`;
}

export async function run(args: string[]): Promise<number> {
  if (args[0] === 'mas-opd') return runMasOpd(args.slice(1));
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['run-dir', 'seed'], boolean: ['quick', 'ablation', 'no-ablation'] });
  if (parsed.positionals.length > 0) throw new UserError(`unexpected argument '${parsed.positionals[0]}' (see --help)`);
  const seed = numberFlag(parsed, 'seed', 0);
  if (!Number.isInteger(seed) || seed < 0) throw new UserError(`--seed must be a non-negative integer, got '${stringFlag(parsed, 'seed')}'`);
  if (parsed.flags.has('ablation') && parsed.flags.has('no-ablation')) throw new UserError('--ablation and --no-ablation exclude each other');
  const base = parsed.flags.has('quick') ? QUICK_SETTINGS : FULL_SETTINGS;
  const ablation = parsed.flags.has('ablation') ? true : parsed.flags.has('no-ablation') ? false : base.ablation;
  const runDir = resolve(stringFlag(parsed, 'run-dir') ?? defaultRunDir());
  if (existsSync(runDir) && readdirSync(runDir).length > 0) throw new UserError(`run directory ${runDir} is not empty; choose another --run-dir`);

  console.log(`marft demo: run directory ${runDir}`);
  const result = await runDemo({ runDir, seed, settings: { ...base, ablation }, log: (line) => console.log(line) });
  console.log(JSON.stringify(finalJson(result)));
  return 0;
}

async function runMasOpd(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(MAS_OPD_HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['run-dir', 'seed', 'runs', 'teacher-conditions'], boolean: ['quick', 'ablation', 'no-ablation'] });
  if (parsed.positionals.length > 0) throw new UserError(`unexpected argument '${parsed.positionals[0]}' (see marft demo mas-opd --help)`);
  const seed = numberFlag(parsed, 'seed', 0);
  if (!Number.isInteger(seed) || seed < 0) throw new UserError(`--seed must be a non-negative integer, got '${stringFlag(parsed, 'seed')}'`);
  if (parsed.flags.has('ablation') && parsed.flags.has('no-ablation')) throw new UserError('--ablation and --no-ablation exclude each other');
  const base = parsed.flags.has('quick') ? QUICK_STUDY : FULL_STUDY;
  const ablation = parsed.flags.has('ablation') ? true : parsed.flags.has('no-ablation') ? false : base.ablation;
  const runsFlag = stringFlag(parsed, 'runs');
  if (runsFlag !== undefined && parsed.flags.has('ablation')) throw new UserError('--runs and --ablation exclude each other (--runs names every run)');
  const runs = runsFlag === undefined ? undefined : parseRuns(runsFlag);
  const teacherConditions = stringFlag(parsed, 'teacher-conditions') ?? base.teacherConditions;
  if (teacherConditions !== 'own' && teacherConditions !== 'both') throw new UserError(`--teacher-conditions must be own or both, got '${teacherConditions}'`);
  const runDir = resolve(stringFlag(parsed, 'run-dir') ?? defaultRunDir('mas-opd'));
  if (existsSync(runDir) && readdirSync(runDir).length > 0) throw new UserError(`run directory ${runDir} is not empty; choose another --run-dir`);

  console.log(`marft demo mas-opd: run directory ${runDir}`);
  const result = await runStudy({ runDir, seed, settings: { ...base, ablation, teacherConditions, ...(runs ? { runs } : {}) }, log: (line) => console.log(line) });
  console.log(JSON.stringify(studyJson(result)));
  return 0;
}

/** `full:0,no-ras:1` → [{variant: 'full', seed: 0}, {variant: 'no-ras', seed: 1}]. */
function parseRuns(text: string): { variant: StudyVariant; seed: number }[] {
  return text.split(',').map((item) => {
    const [variant, seedText, extra] = item.trim().split(':');
    const seed = Number(seedText);
    if (!variant || !(variant in STUDY_VARIANTS) || extra !== undefined || seedText === undefined || !/^\d+$/.test(seedText) || !Number.isSafeInteger(seed)) {
      throw new UserError(`--runs: '${item}' is not VARIANT:SEED (variants: ${Object.keys(STUDY_VARIANTS).join(', ')}; seed a non-negative integer)`);
    }
    return { variant: variant as StudyVariant, seed };
  });
}
