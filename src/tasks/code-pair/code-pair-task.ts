// The code counterpart of the arith-pair study as a `marft train` task (registered as "code-pair",
// src/run/task-registry.ts): the order-sensitive expressions of ./code-problems.ts as programming
// problems with golden stdin/stdout tests, played by the Coder–Tester pair (CURE's system at
// horizon 1; the MAS-OPD paper's at T = 4) or by a single Coder (SA+ST, SA+MT) in the real code
// environment, every program and test case run in the sandbox. It is the workflow task
// (src/tasks/workflow-task.ts) on these problems, with a phrase tokenizer of its own, so the GRPO
// family, MAGRPO, AT-GRPO, MARFT, IPPO and CURE (rewards: cure, on the pair at horizon 1) run on it.
//
// The model is built here when the configuration names none (model.path ""): the students' base, a
// Qwen2-shaped decoder of hidden 128 and 2 layers over the phrase vocabulary (the arith-pair
// students' shape), pretrained on imperfect scripted transcripts of every system of the task
// (./scripted-episodes.ts), from `baseSeed` (default: the run's seed), kept in `baseCache` when given.
// There is no MAS-OPD teacher for this task.
//
// Options (docs/tasks.md, "code-pair"):
//   workflow       coder-tester (default) | sa-st | sa-mt
//   horizon        turns of the pair and of SA+MT, 1..4 (default 4; CURE needs 1)
//   heldOut        problems set aside for evaluation, never trained on (default 100 of 468)
//   studentSteps   pretraining steps of the students' base (default 1600)
//   baseSeed       the seed the base is pretrained from (default: the run's seed)
//   baseCache      a folder where the pretrained base is kept and reused ('' = none)
import { createHash } from 'node:crypto';
import type { Engine } from '../../engine/types.ts';
import type { TaskBundle } from '../../train/task.ts';
import type { Rng } from '../../core/rng.ts';
import { DEFAULT_SFT } from '../../train/sft.ts';
import { DEFAULT_ROLE_REWARD_WEIGHTS } from '../../env/index.ts';
import type { Workflow } from '../../workflow/index.ts';
import { studentModelConfig } from '../arith-pair/models.ts';
import { PhraseTokenizer } from '../arith-pair/phrase-tokenizer.ts';
import { cachedRunner } from '../arith-pair/cached-runner.ts';
import { DEFAULT_NOISE } from '../arith-pair/transcripts.ts';
import { intOption, oneOfOption, rejectUnknown, stringOption, type Options } from '../options.ts';
import type { ProblemSets } from '../problem-source.ts';
import { cachedScripted, type ScriptedPretraining } from '../scripted-pretraining.ts';
import { buildWorkflow, type WorkflowChoice } from '../workflow-catalog.ts';
import { WorkflowTask, type WorkflowTaskOptions } from '../workflow-task.ts';
import { cachedJudge } from './cached-judge.ts';
import { codePairPhrases } from './code-phrases.ts';
import { codeProblem, codeSplit, type CodeExpression } from './code-problems.ts';
import { scriptedCodeBatch } from './scripted-episodes.ts';

export const CODE_PAIR_WORKFLOWS = ['coder-tester', 'sa-st', 'sa-mt'] as const;
export type CodePairWorkflow = (typeof CODE_PAIR_WORKFLOWS)[number];

export const CODE_PAIR_OPTIONS = ['workflow', 'horizon', 'heldOut', 'studentSteps', 'baseSeed', 'baseCache'] as const;

export interface CodePairOptions {
  workflow: CodePairWorkflow;
  horizon: number;
  heldOut: number;
  studentSteps: number;
  baseSeed?: number;
  baseCache: string;
}

/** The longest horizon the base is pretrained for (the pair's and SA+MT's T). */
export const MAX_HORIZON = 4;
/** Scripted episodes per pretraining step (the arith-pair study's 16). */
const EPISODES_PER_STEP = 16;
/** A program of this task prints at once; a stuck one is cut off after this (the code environment's default is 30 s). */
const PROGRAM_TIMEOUT_MS = 5000;

/** Every system the base is pretrained on (the pair at horizon 1 reads the T = 4 pair's first-turn contexts). */
export function codeTaskSystems(): Workflow[] {
  const choice = (name: CodePairWorkflow): WorkflowChoice => ({ name, agentsPerRole: 1, horizon: MAX_HORIZON });
  return [choice('coder-tester'), choice('sa-st'), choice('sa-mt')].map((c) => buildWorkflow(c, 'code'));
}

export function codePairTokenizer(): PhraseTokenizer {
  return new PhraseTokenizer(codePairPhrases(codeTaskSystems()));
}

export function parseCodePairOptions(raw: Options): CodePairOptions {
  rejectUnknown(raw, CODE_PAIR_OPTIONS, "task 'code-pair'");
  const options: CodePairOptions = {
    workflow: oneOfOption(raw, 'workflow', CODE_PAIR_WORKFLOWS, 'coder-tester'),
    horizon: intOption(raw, 'horizon', MAX_HORIZON, 1, MAX_HORIZON),
    heldOut: intOption(raw, 'heldOut', 100, 1, 400),
    studentSteps: intOption(raw, 'studentSteps', 1600, 0),
    baseCache: raw.baseCache === '' ? '' : (stringOption(raw, 'baseCache') ?? ''),
  };
  if (raw.baseSeed !== undefined) options.baseSeed = intOption(raw, 'baseSeed', 0, 0);
  return options;
}

function workflowOptions(o: CodePairOptions): WorkflowTaskOptions {
  return {
    dataset: { name: 'code-pair' },
    split: { heldOutFraction: 0, splitSeed: 0, maxProblemTokens: 0 },
    workflow: { name: o.workflow, agentsPerRole: 1, horizon: o.workflow === 'sa-st' ? 1 : o.horizon },
    rewardWeights: DEFAULT_ROLE_REWARD_WEIGHTS,
    programTimeoutMs: PROGRAM_TIMEOUT_MS,
    maxInFlight: 0,
    tokenizer: 'code-pair',
    tinyModel: { hiddenSize: 128, layers: 2, contextLength: 2048 },
  };
}

export function codeProblemSets(heldOut: number): ProblemSets {
  const split = codeSplit(heldOut);
  return { domain: 'code', train: split.train.map(codeProblem), heldOut: split.heldOut.map(codeProblem), loadErrors: [], dropped: 0 };
}

/** The cache folder's name of the base: a hash of everything that shapes it. */
export function cachedBaseName(o: CodePairOptions, tokenizer: PhraseTokenizer, seed: number): string {
  const shaping = JSON.stringify({ config: studentModelConfig(tokenizer), steps: o.studentSteps, episodes: EPISODES_PER_STEP, sft: DEFAULT_SFT, noise: DEFAULT_NOISE, heldOut: o.heldOut, systems: codeTaskSystems().map((w) => w.name), version: 1 });
  return `code-pair-student-${createHash('sha256').update(shaping).digest('hex').slice(0, 12)}-seed${seed}`;
}

function pretraining(o: CodePairOptions, tokenizer: PhraseTokenizer): ScriptedPretraining {
  const split = codeSplit(o.heldOut).train;
  const systems = codeTaskSystems();
  const draw = (rng: Rng): { workflow: Workflow; problem: CodeExpression }[] => Array.from({ length: EPISODES_PER_STEP }, (_, k) => ({ workflow: systems[k % systems.length]!, problem: rng.pick(split) }));
  return {
    task: 'code-pair',
    label: "the students' base",
    short: 'student',
    config: studentModelConfig(tokenizer),
    steps: o.studentSteps,
    episodesPerStep: EPISODES_PER_STEP,
    initStream: 13,
    dataStream: 23,
    batch: (rng) => scriptedCodeBatch(draw(rng), tokenizer, rng, DEFAULT_NOISE),
  };
}

export function createCodePairTask(raw: Options = {}): { task: WorkflowTask; options: CodePairOptions; tokenizer: PhraseTokenizer } {
  const options = parseCodePairOptions(raw);
  const tokenizer = codePairTokenizer();
  // Each distinct program runs once per input, and is judged once per problem, in the sandbox.
  const task = new WorkflowTask(workflowOptions(options), tokenizer, { tokenizer, problems: codeProblemSets(options.heldOut), runProgram: cachedRunner(), judge: cachedJudge() });
  return { task, options, tokenizer };
}

export function codePair(raw: Options = {}): TaskBundle {
  const { task, options, tokenizer } = createCodePairTask(raw);
  return {
    task,
    vocabSize: tokenizer.vocabSize,
    buildEngine: (seed): Promise<Engine> => {
      const s = options.baseSeed ?? seed;
      return cachedScripted(pretraining(options, tokenizer), s, options.baseCache, cachedBaseName(options, tokenizer, s));
    },
  };
}
