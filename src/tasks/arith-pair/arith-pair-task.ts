// The MAS-OPD study's task as a `marft train` task (registered as "arith-pair",
// src/run/task-registry.ts): the order-sensitive two-step arithmetic problems of ./study-task.ts,
// played by one of the maths systems of the workflow task (the Reasoner–Tool-User pair with one or
// two agents per role, SA+ST, SA+MT) in the real maths environment, the Tool-User's programs run in
// the sandbox. It is the workflow task (src/tasks/workflow-task.ts) on these problems, with the
// study's phrase tokenizer, so every algorithm runs on it: the GRPO family and MAGRPO (groups and
// joint trees), AT-GRPO (tree sampling), MARFT and IPPO, and MAS-OPD (its distillation view).
//
// The models are built here when the configuration names none (model.path ""; teacher.path "" for
// MAS-OPD), both Qwen2-shaped decoders over the phrase vocabulary (./models.ts):
//   students' base  hidden 128, 2 layers, trained on imperfect scripted transcripts of every system
//                   of the task (./scripted-episodes.ts), so that SA+ST, SA+MT, the pair and the
//                   4-agent system all start from one base with their formats, as the papers' rows
//                   start from one pretrained model;
//   teacher         hidden 160, 3 layers, trained on correct, role-conditioned transcripts of the
//                   pair and the 4-agent system, verdict lines included.
// Both are pretrained from `baseSeed` (default: the run's seed) and kept in `baseCache` when given.
//
// Options (docs/tasks.md, "arith-pair"):
//   workflow       reasoner-tooluser (default) | sa-st | sa-mt
//   agentsPerRole  1 (the pair, default) or 2 (the 4-agent system); reasoner-tooluser only
//   heldOut        problems set aside for evaluation, never trained on (default 200)
//   studentSteps   pretraining steps of the students' base (default 1600)
//   teacherSteps   pretraining steps of the teacher (default 300)
//   baseSeed       the seed both models are pretrained from (default: the run's seed)
//   baseCache      a folder where the pretrained models are kept and reused ('' = none)
import { createHash } from 'node:crypto';
import type { Engine, ModelConfig } from '../../engine/types.ts';
import type { TaskBundle } from '../../train/task.ts';
import type { Rng } from '../../core/rng.ts';
import { DEFAULT_SFT } from '../../train/sft.ts';
import { cachedScripted, type ScriptedPretraining } from '../scripted-pretraining.ts';
import { DEFAULT_ROLE_REWARD_WEIGHTS } from '../../env/index.ts';
import type { Workflow } from '../../workflow/index.ts';
import type { Problem } from '../arith-duo/task.ts';
import { intOption, oneOfOption, optionError, rejectUnknown, stringOption, type Options } from '../options.ts';
import type { ProblemSets } from '../problem-source.ts';
import { buildWorkflow, type WorkflowChoice } from '../workflow-catalog.ts';
import { WorkflowTask, type WorkflowTaskOptions } from '../workflow-task.ts';
import { cachedRunner } from './cached-runner.ts';
import { studentModelConfig, teacherModelConfig } from './models.ts';
import { pairTaskPhrases } from './pair-phrases.ts';
import { PhraseTokenizer } from './phrase-tokenizer.ts';
import { scriptedStudentBatch, scriptedTeacherBatch } from './scripted-episodes.ts';
import { HORIZON, mathProblem, studySplit } from './study-task.ts';
import { DEFAULT_NOISE } from './transcripts.ts';

export const ARITH_PAIR_WORKFLOWS = ['reasoner-tooluser', 'sa-st', 'sa-mt'] as const;
export type ArithPairWorkflow = (typeof ARITH_PAIR_WORKFLOWS)[number];

export const ARITH_PAIR_OPTIONS = ['workflow', 'agentsPerRole', 'heldOut', 'studentSteps', 'teacherSteps', 'baseSeed', 'baseCache'] as const;

export interface ArithPairOptions {
  workflow: ArithPairWorkflow;
  agentsPerRole: number;
  heldOut: number;
  studentSteps: number;
  teacherSteps: number;
  baseSeed?: number;
  baseCache: string;
}

/** Scripted episodes per pretraining step (the demo's study: 16). */
const EPISODES_PER_STEP = 16;

/** Every system of the task, in the order the pretraining cycles through them. */
export function taskSystems(): Workflow[] {
  const choice = (name: ArithPairWorkflow, agentsPerRole = 1): WorkflowChoice => ({ name, agentsPerRole, horizon: HORIZON });
  return [choice('reasoner-tooluser'), choice('reasoner-tooluser', 2), choice('sa-st'), choice('sa-mt')].map((c) => buildWorkflow(c, 'math'));
}

/** The tokenizer every system of the task shares (one base model reads them all). */
export function pairTaskTokenizer(): PhraseTokenizer {
  return new PhraseTokenizer(pairTaskPhrases(taskSystems()));
}

export function parseArithPairOptions(raw: Options): ArithPairOptions {
  rejectUnknown(raw, ARITH_PAIR_OPTIONS, "task 'arith-pair'");
  const options: ArithPairOptions = {
    workflow: oneOfOption(raw, 'workflow', ARITH_PAIR_WORKFLOWS, 'reasoner-tooluser'),
    agentsPerRole: intOption(raw, 'agentsPerRole', 1, 1, 2),
    heldOut: intOption(raw, 'heldOut', 200, 1, 1000),
    studentSteps: intOption(raw, 'studentSteps', 1600, 0),
    teacherSteps: intOption(raw, 'teacherSteps', 300, 0),
    baseCache: raw.baseCache === '' ? '' : (stringOption(raw, 'baseCache') ?? ''),
  };
  if (raw.baseSeed !== undefined) options.baseSeed = intOption(raw, 'baseSeed', 0, 0);
  if (options.agentsPerRole > 1 && options.workflow !== 'reasoner-tooluser') throw optionError('agentsPerRole', options.agentsPerRole, `1 for workflow '${options.workflow}' (a single agent; two per role: the pair)`);
  return options;
}

/** The workflow task's options for this system (no dataset is read: the problems are given). */
function workflowOptions(o: ArithPairOptions): WorkflowTaskOptions {
  return {
    dataset: { name: 'arith-pair' },
    split: { heldOutFraction: 0, splitSeed: 0, maxProblemTokens: 0 },
    workflow: { name: o.workflow, agentsPerRole: o.agentsPerRole, horizon: HORIZON },
    rewardWeights: DEFAULT_ROLE_REWARD_WEIGHTS,
    maxInFlight: 0,
    tokenizer: 'arith-pair',
    tinyModel: { hiddenSize: 128, layers: 2, contextLength: 2048 },
  };
}

export function problemSets(heldOut: number): ProblemSets {
  const split = studySplit(heldOut);
  return { domain: 'math', train: split.train.map(mathProblem), heldOut: split.heldOut.map(mathProblem), loadErrors: [], dropped: 0 };
}

type Which = 'student' | 'teacher';

/** What differs between the two models: shape, budget, seed streams (the demo's), and the systems they see (the teacher: the two multi-agent ones, MAS-OPD's). */
const MODELS: Record<Which, { label: string; config: (t: PhraseTokenizer) => ModelConfig; steps: (o: ArithPairOptions) => number; initStream: number; dataStream: number; systems: () => Workflow[] }> = {
  student: { label: "the students' base", config: studentModelConfig, steps: (o) => o.studentSteps, initStream: 12, dataStream: 22, systems: () => taskSystems() },
  teacher: { label: 'the teacher', config: teacherModelConfig, steps: (o) => o.teacherSteps, initStream: 11, dataStream: 21, systems: () => taskSystems().slice(0, 2) },
};

/** The cache folder's name of a pretrained model: a hash of everything that shapes it, so a changed setting never reuses a stale one. */
export function cachedModelName(which: Which, o: ArithPairOptions, config: ModelConfig, seed: number): string {
  const shaping = JSON.stringify({ which, config, steps: MODELS[which].steps(o), episodes: EPISODES_PER_STEP, sft: DEFAULT_SFT, noise: DEFAULT_NOISE, heldOut: o.heldOut, systems: taskSystems().map((w) => w.name), version: 1 });
  return `arith-pair-${which}-${createHash('sha256').update(shaping).digest('hex').slice(0, 12)}-seed${seed}`;
}

/** How one of the two models is pretrained: from random initialisation on scripted transcripts of its systems. */
function pretraining(which: Which, o: ArithPairOptions, tokenizer: PhraseTokenizer): ScriptedPretraining {
  const model = MODELS[which];
  const split = studySplit(o.heldOut).train;
  const systems = model.systems();
  const draw = (rng: Rng): { workflow: Workflow; problem: Problem }[] => Array.from({ length: EPISODES_PER_STEP }, (_, k) => ({ workflow: systems[k % systems.length]!, problem: rng.pick(split) }));
  return {
    task: 'arith-pair',
    label: model.label,
    short: which,
    config: model.config(tokenizer),
    steps: model.steps(o),
    episodesPerStep: EPISODES_PER_STEP,
    initStream: model.initStream,
    dataStream: model.dataStream,
    batch: (rng) => (which === 'student' ? scriptedStudentBatch(draw(rng), tokenizer, rng, DEFAULT_NOISE) : scriptedTeacherBatch(draw(rng), tokenizer, rng, DEFAULT_NOISE)),
  };
}

/** A pretrained model: from baseCache when it holds it, else pretrained (and stored there). */
function pretrained(which: Which, o: ArithPairOptions, tokenizer: PhraseTokenizer, runSeed: number): Promise<Engine> {
  const seed = o.baseSeed ?? runSeed;
  return cachedScripted(pretraining(which, o, tokenizer), seed, o.baseCache, cachedModelName(which, o, MODELS[which].config(tokenizer), seed));
}

export function createArithPairTask(raw: Options = {}): { task: WorkflowTask; options: ArithPairOptions; tokenizer: PhraseTokenizer } {
  const options = parseArithPairOptions(raw);
  const tokenizer = pairTaskTokenizer();
  // Each distinct program runs once in the sandbox and its outcome is reused (./cached-runner.ts).
  const task = new WorkflowTask(workflowOptions(options), tokenizer, { tokenizer, problems: problemSets(options.heldOut), runProgram: cachedRunner() });
  return { task, options, tokenizer };
}

export function arithPair(raw: Options = {}): TaskBundle {
  const { task, options, tokenizer } = createArithPairTask(raw);
  return {
    task,
    vocabSize: tokenizer.vocabSize,
    buildEngine: (seed) => pretrained('student', options, tokenizer, seed),
    buildTeacher: (seed) => pretrained('teacher', options, tokenizer, seed),
  };
}
