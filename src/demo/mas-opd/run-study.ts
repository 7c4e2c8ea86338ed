// The MAS-OPD study, top to bottom (`marft demo mas-opd`):
//   1. a teacher (hidden 160, 3 layers) trained here on correct, role-conditioned transcripts of the
//      Reasoner–Tool-User pair, verdict lines and what follows them included (./transcripts.ts);
//   2. the students' base (hidden 128, 2 layers) trained on imperfect transcripts;
//   3. held-out team accuracy (greedy, problems never trained on) of the untrained students and of
//      the teacher playing both roles under its role conditions;
//   4. MAS-OPD (src/opd/): one LoRA adapter per role, the teacher scoring the students' own
//      rollouts in the real maths environment, RAS (λ) and PAC on; held-out accuracy again;
//   5. with `ablation`: the same budget without RAS (λ = 0) and without PAC, over several seeds
//      (`runs` picks exactly which, so one study can be split over processes).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../engine/index.ts';
import type { Engine } from '../../engine/types.ts';
import { mathAttributor } from '../../opd/math-attributor.ts';
import { parseConfig } from '../../config/load.ts';
import type { DistillableTask } from '../../opd/distillable-task.ts';
import { distillationRollout } from '../../opd/rollout.ts';
import { train } from '../../run/train.ts';
import { PAPER_OPD_SETTINGS, type OpdSettings } from '../../opd/settings.ts';
import { teacherTeam } from '../../opd/teacher-team.ts';
import { deriveSeed, Rng } from '../../core/rng.ts';
import { type Workflow, withPolicies } from '../../workflow/index.ts';
import { parameterCount } from '../../tasks/arith-duo/model-config.ts';
import { round4 } from '../report.ts';
import type { Problem } from '../../tasks/arith-duo/task.ts';
import { cachedRunner } from '../../tasks/arith-pair/cached-runner.ts';
import { studentModelConfig, teacherModelConfig } from '../../tasks/arith-pair/models.ts';
import { PhraseTokenizer } from '../../tasks/arith-pair/phrase-tokenizer.ts';
import { DEFAULT_SFT, sft } from '../../train/sft.ts';
import { MAX_REPLY_TOKENS, studyEnv, studyPhrases, studySplit, studyWorkflow } from '../../tasks/arith-pair/study-task.ts';
import { DEFAULT_NOISE, studentBatch, teacherBatch, type TeacherConditions } from '../../tasks/arith-pair/transcripts.ts';

export interface StudySettings {
  heldOut: number;
  teacherSteps: number;
  studentSteps: number;
  /** Simulated episodes per pretraining step. */
  episodesPerStep: number;
  opd: OpdSettings;
  ablation: boolean;
  /** Seeds of each variant when ablating (the first is the main run's). */
  ablationSeeds: number;
  /** The role conditions the teacher learns in each seat (./transcripts.ts); 'own' in the runs of docs/mas-opd.md's first tables. */
  teacherConditions: TeacherConditions;
  /**
   * Run exactly these MAS-OPD runs, in this order, in place of the default (MAS-OPD at `seed`; with
   * `ablation`, every variant at `ablationSeeds` seeds from `seed`), so one study's runs can be split
   * over processes: every process builds the same teacher and base from `seed`, and a run's result
   * depends only on its variant and seed.
   */
  runs?: { variant: StudyVariant; seed: number }[];
}

/** The study's variants: full MAS-OPD, without RAS (λ = 0), without PAC. */
export const STUDY_VARIANTS = {
  full: { name: 'MAS-OPD', settings: {} },
  'no-ras': { name: 'without RAS (λ = 0)', settings: { lambda: 0 } },
  'no-pac': { name: 'without PAC', settings: { pac: false } },
} as const satisfies Record<string, { name: string; settings: Partial<OpdSettings> }>;
export type StudyVariant = keyof typeof STUDY_VARIANTS;

/**
 * The paper's MAS-OPD settings except where models of a few hundred thousand parameters built in
 * minutes need otherwise: a LoRA learning rate of 1e-3 (the paper's 1e-6 is for billions of
 * parameters), 20 steps of 32 episodes in minibatches of 16 (the paper: 150 × 128 in 64s), replies of
 * at most 32 tokens. Temperature 1, top-p 1, top-k off, λ = 0.1, PAC on, as in the paper.
 */
export const STUDY_OPD_SETTINGS: OpdSettings = {
  ...PAPER_OPD_SETTINGS,
  steps: 20,
  batchSize: 32,
  minibatchSize: 16,
  maxNewTokens: MAX_REPLY_TOKENS,
  optim: { ...PAPER_OPD_SETTINGS.optim, lr: 1e-3 },
  lora: { rank: 8, alpha: 16 },
};

/** The budgets of the runs reported in docs/mas-opd.md (seed 0: 328 s on 2 cores; with `ablation`, 9 MAS-OPD runs of about 1-3 minutes each). */
export const FULL_STUDY: StudySettings = { heldOut: 200, teacherSteps: 300, studentSteps: 200, episodesPerStep: 16, opd: STUDY_OPD_SETTINGS, ablation: false, ablationSeeds: 3, teacherConditions: 'own' };
/** For tests: the same pipeline with small budgets. */
export const QUICK_STUDY: StudySettings = { ...FULL_STUDY, heldOut: 60, teacherSteps: 60, studentSteps: 40, episodesPerStep: 8, opd: { ...STUDY_OPD_SETTINGS, steps: 2, batchSize: 8, minibatchSize: 4 } };

export interface VariantResult {
  variant: string;
  seed: number;
  after: number;
  seconds: number;
  /** Per-step metrics: mean A_OPD and A_role per role, rollout reward. */
  metrics: Record<string, number | string | null>[];
}

export interface StudyResult {
  before: number;
  teacher: number;
  runs: VariantResult[];
  parameters: { student: number; teacher: number };
  pretrainLoss: { teacher: number; student: number };
  seconds: { pretrain: number; total: number };
}

const GREEDY = { temperature: 0, topP: 1, topK: 0 };

/** The run configuration of one MAS-OPD run of the study: its settings as the keys `marft train` reads (src/opd/config-settings.ts). */
function studyConfig(s: OpdSettings, seed: number) {
  return parseConfig({
    algorithm: 'mas-opd',
    seed,
    task: { name: 'mas-opd-study' },
    train: { steps: s.steps, checkpointEvery: s.steps, microBatchTokens: s.microBatchTokens },
    rollout: { batchSize: s.batchSize, rolloutsPerPrompt: 1, temperature: s.temperature, topP: s.topP, topK: s.topK, maxNewTokens: s.maxNewTokens },
    actor: { optim: { lr: s.optim.lr, beta1: s.optim.beta1, beta2: s.optim.beta2, eps: s.optim.eps, weightDecay: s.optim.weightDecay, maxGradNorm: s.optim.maxGradNorm, schedule: 'constant', warmupRatio: 0 } },
    policy: { loraRank: s.lora.rank, loraAlpha: s.lora.alpha },
    opd: { lambda: s.lambda, pac: s.pac, roleLine: s.roleLine, minibatchSize: s.minibatchSize },
  });
}

export async function runStudy(options: { runDir: string; seed: number; settings: StudySettings; log: (line: string) => void }): Promise<StudyResult> {
  const { runDir, seed, settings, log } = options;
  const t0 = performance.now();
  mkdirSync(runDir, { recursive: true });
  const workflow = studyWorkflow();
  const tokenizer = new PhraseTokenizer(studyPhrases(workflow));
  const split = studySplit(settings.heldOut);
  const runner = cachedRunner();
  const teacherConfig = teacherModelConfig(tokenizer);
  const studentConfig = studentModelConfig(tokenizer);
  const parameters = { student: parameterCount(studentConfig), teacher: parameterCount(teacherConfig) };
  log(`task: a o b o c over digits 1-9 where the order of operations matters; Reasoner–Tool-User pair (T = ${workflow.horizon}), the Tool-User's programs run in the sandbox`);
  log(`  ${split.train.length} training problems, ${split.heldOut.length} held-out problems never trained on; vocabulary ${tokenizer.vocabSize} (characters and the prompts' fixed phrases)`);
  log(`models: teacher ${(parameters.teacher / 1e6).toFixed(2)}M parameters (hidden ${teacherConfig.hiddenSize}, ${teacherConfig.numHiddenLayers} layers), students' base ${(parameters.student / 1e6).toFixed(2)}M (hidden ${studentConfig.hiddenSize}, ${studentConfig.numHiddenLayers} layers)`);

  const draw = (rng: Rng): Problem[] => Array.from({ length: settings.episodesPerStep }, () => rng.pick(split.train));
  const progress = (who: string, steps: number) => (step: number, loss: number) => {
    if (step % Math.max(1, Math.round(steps / 5)) === 0 || step === steps) log(`  ${who} step ${step}/${steps}  loss ${loss.toFixed(4)}`);
  };
  const teacher = createEngine(teacherConfig, { seed: deriveSeed(seed, 11) });
  const student = createEngine(studentConfig, { seed: deriveSeed(seed, 12) });
  try {
    log(`training the teacher on correct, role-conditioned transcripts${settings.teacherConditions === 'both' ? ', each seat under both roles\' conditions' : ''}: ${settings.teacherSteps} steps`);
    const tRng = new Rng(deriveSeed(seed, 21));
    const tLoss = await sft(teacher, () => teacherBatch(workflow, tokenizer, draw(tRng), tRng, DEFAULT_NOISE, settings.teacherConditions), { ...DEFAULT_SFT, steps: settings.teacherSteps }, progress('teacher', settings.teacherSteps));
    log(`training the students' base on imperfect transcripts: ${settings.studentSteps} steps`);
    const sRng = new Rng(deriveSeed(seed, 22));
    const sLoss = await sft(student, () => studentBatch(workflow, tokenizer, draw(sRng), sRng, DEFAULT_NOISE), { ...DEFAULT_SFT, steps: settings.studentSteps }, progress('student', settings.studentSteps));
    const pretrainSeconds = (performance.now() - t0) / 1000;

    const opdSettings = (o: Partial<OpdSettings>): OpdSettings => ({ ...settings.opd, roleLine: 'first-sentence', ...o });
    const evaluate = async (engine: Engine, wf: Workflow): Promise<number> => {
      const episodes = await distillationRollout(engine, tokenizer, wf, split.heldOut.map((p) => studyEnv(p, runner)), { ...GREEDY, maxNewTokens: settings.opd.maxNewTokens }, 0);
      return episodes.reduce((s, e) => s + e.outcome, 0) / episodes.length;
    };
    const before = await evaluate(student, withPolicies(workflow, { reasoner: 'base', tool_user: 'base' }));
    log(`untrained students, greedy, ${split.heldOut.length} held-out problems: team accuracy ${before.toFixed(3)}`);
    const teacherScore = await evaluate(teacher, teacherTeam(workflow));
    log(`the teacher playing both roles: team accuracy ${teacherScore.toFixed(3)}`);

    const variants: StudyVariant[] = settings.ablation ? ['full', 'no-ras', 'no-pac'] : ['full'];
    const seeds = settings.ablation ? Array.from({ length: settings.ablationSeeds }, (_, i) => seed + i) : [seed];
    const plan = settings.runs ?? variants.flatMap((variant) => seeds.map((s) => ({ variant, seed: s })));
    const runs: VariantResult[] = [];
    for (const { variant: key, seed: runSeed } of plan) {
      const variant = STUDY_VARIANTS[key];
      const started = performance.now();
      const s = opdSettings(variant.settings);
      log(`${variant.name}, seed ${runSeed}: ${s.steps} steps × ${s.batchSize} episodes (minibatches of ${s.minibatchSize}), λ = ${s.lambda}, PAC ${s.pac ? 'on' : 'off'}`);
      const trainRng = new Rng(deriveSeed(runSeed, 31));
      // MAS-OPD through the one training pipeline (`marft train`'s loop): the study's pair is the task's workflow.
      const task: DistillableTask = {
        agents: workflow.agents.map((a) => a.name),
        rollout: async () => {
          throw new Error('the study trains MAS-OPD only, whose rollout is its own');
        },
        evaluate: async () => {
          throw new Error('the study evaluates the students itself');
        },
        distillation: () => ({ workflow, tokenizer, trainEnvs: (count) => Array.from({ length: count }, () => studyEnv(trainRng.pick(split.train), runner)), attribute: mathAttributor }),
      };
      const result = await train({
        config: studyConfig(s, runSeed),
        engine: student,
        task,
        teacher,
        runDir: join(runDir, 'runs', `${variant.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, '').toLowerCase()}-seed${runSeed}`),
        progress: false,
        // The study scores the students itself (greedy, before and after), through the pair's own rollout.
        evaluateBeforeAfter: false,
        onStep: (m) => {
          const n = Number(m.step) + 1;
          if (n === 1 || n % 10 === 0 || n === s.steps) {
            log(`  step ${String(n).padStart(3)}/${s.steps}  rollout accuracy ${Number(m.score_mean).toFixed(3)}  A_OPD reasoner ${Number(m.a_opd_reasoner).toFixed(3)} tool-user ${Number(m.a_opd_tool_user).toFixed(3)}  A_role ${Number(m.a_role_reasoner).toFixed(2)}/${Number(m.a_role_tool_user).toFixed(2)} (first token ${Number(m.a_role_first_reasoner).toFixed(2)}/${Number(m.a_role_first_tool_user).toFixed(2)})  ${Number(m.step_time_s).toFixed(1)} s/step`);
          }
        },
      });
      const trained = withPolicies(workflow, result.plan.policies);
      const after = await evaluate(student, trained);
      log(`  held-out team accuracy ${after.toFixed(3)}`);
      runs.push({ variant: variant.name, seed: runSeed, after, seconds: (performance.now() - started) / 1000, metrics: result.metrics });
      for (const name of new Set(Object.values(result.plan.policies))) await student.deleteAdapter(name);
    }
    const out: StudyResult = { before, teacher: teacherScore, runs, parameters, pretrainLoss: { teacher: tLoss[tLoss.length - 1] ?? NaN, student: sLoss[sLoss.length - 1] ?? NaN }, seconds: { pretrain: pretrainSeconds, total: (performance.now() - t0) / 1000 } };
    writeFileSync(join(runDir, 'results.json'), JSON.stringify({ ...studyJson(out), runs: runs.map(({ metrics: _m, ...r }) => r) }, null, 2) + '\n');
    log(`program runs in the sandbox: ${runner.runs()} distinct programs`);
    return out;
  } finally {
    await teacher.dispose();
    await student.dispose();
  }
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const sd = (xs: number[]) => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));

/** The last line: {"before", "after", "teacher", ...}; with ablations, mean ± sd of every variant. */
export function studyJson(r: StudyResult): Record<string, unknown> {
  const main = r.runs[0]!;
  const gap = r.teacher - r.before;
  const out: Record<string, unknown> = {
    before: round4(r.before),
    after: round4(main.after),
    teacher: round4(r.teacher),
    improvement: round4(main.after - r.before),
    gapClosed: gap > 0 ? round4((main.after - r.before) / gap) : null,
    heldOutProblems: undefined,
  };
  const variants = [...new Set(r.runs.map((x) => x.variant))];
  if (variants.length > 1) {
    out.ablation = Object.fromEntries(variants.map((v) => {
      const xs = r.runs.filter((x) => x.variant === v).map((x) => x.after);
      return [v, { mean: round4(mean(xs)), sd: round4(sd(xs)), runs: xs.map(round4) }];
    }));
  }
  Object.assign(out, { opdSteps: main.metrics.length, parameters: r.parameters, seconds: Math.round(r.seconds.total) });
  delete out.heldOutProblems;
  return out;
}
