// A trainer Task (src/train/task.ts) built from real pieces: a dataset of src/env/datasets, a built-in
// Flex-MG workflow (src/workflow/builtin), the maths or code environment (src/env) with its
// verifier or sandbox, and the model's tokenizer. Registered as "workflow" (src/run/task-registry.ts).
//
//   rollout(engine, {step, seed, batchSize, rolloutsPerPrompt, sampling, policies})
//     batchSize training problems drawn from (seed, step) only (problem-source.ts), each played
//     rolloutsPerPrompt times (adjacent episodes), by the workflow with the request's per-agent
//     adapters, sampled through engineSampler; the environment's rewards recorded raw (each turn's
//     team reward, each action's role-local reward; the trainer weighs and places them, the
//     configuration's `reward` section); a tree (treeBranches, jointTree) ranks its copies by the
//     request's turnScore.
//   evaluate(engine, {seed, sampling, problems, policies})
//     the first `problems` held-out problems (0 = all), one episode each; score = the
//     environment's final outcome (maths: correct; code: pass fraction).
//   distillation()
//     MAS-OPD's view (algorithm: mas-opd, src/opd/distillable-task.ts): the same workflow, problems
//     and environments, the tokenizer, and the PAC rules of the two pairs (maths: Reasoner–Tool-User,
//     src/opd/math-attributor.ts; code: Coder–Tester, src/opd/code-attributor.ts).
//
// Options are listed in docs/tasks.md; bad ones fail with "task.options.KEY: got X, expected Y".
import type { Engine, SamplingEngine } from '../engine/types.ts';
import { envFactory, roleRewardWeights, DEFAULT_ROLE_REWARD_WEIGHTS, type EnvOptions, type ProgramRunner, type RoleRewardWeights } from '../env/index.ts';
import type { Problem } from '../env/datasets/index.ts';
import { deriveSeed } from '../core/rng.ts';
import { tagGroups } from '../train/episode-groups.ts';
import type { EvalRequest, RewardScheme, RolloutRequest, Sampling, TaskBundle, TaskContext } from '../train/task.ts';
import type { DistillableTask, DistillationSource } from '../opd/distillable-task.ts';
import { mathAttributor } from '../opd/math-attributor.ts';
import { codeAttributor } from '../opd/code-attributor.ts';
import type { Attributor } from '../opd/pac.ts';
import { CODE_PROGRAM_TIMEOUT_MS, sandboxJudge, TESTER_COMPARISONS, type CodeJudge, type TesterComparison } from '../env/code-env.ts';
import { defaultProgramRunner } from '../env/program-runner.ts';
import type { CodeProblem } from '../env/datasets/types.ts';
import { applyCureRewards, type CureContext } from './cure-scheme.ts';
import { loadTokenizer, type Tokenizer } from '../tokenizer/index.ts';
import { jointTreeRollout } from '../workflow/joint-tree-sampling.ts';
import { engineSampler, rollout, treeRollout, withPolicies, BASE_POLICY, type ActionSampler, type Episode, type TaskEnv, type TurnScore, type Workflow } from '../workflow/index.ts';
import { intOption, numberOption, oneOfOption, optionError, refuseMovedRewardOptions, rejectUnknown, stringOption, TaskOptionError, type Options } from './options.ts';
import { datasetName, loadProblemSets, stepProblems, type DatasetChoice, type ProblemSets, type SplitChoice } from './problem-source.ts';
import { DEFAULT_TINY_SHAPE, taskCharTokenizer, tinyEngine, type TinyModelShape } from './tiny-model.ts';
import { WORKFLOW_NAMES, buildWorkflow, defaultAnswerRole, type WorkflowChoice } from './workflow-catalog.ts';

export const WORKFLOW_TASK_OPTIONS = [
  'dataset', 'file', 'heldOutDataset', 'heldOutFile', 'heldOutFraction', 'splitSeed', 'maxProblemTokens',
  'workflow', 'agentsPerRole', 'horizon',
  'rewardWeights', 'answerRole', 'programTimeoutMs', 'testerComparison', 'maxInFlight',
  'tokenizer', 'hiddenSize', 'layers', 'contextLength',
] as const;

export interface WorkflowTaskOptions {
  dataset: DatasetChoice;
  split: SplitChoice;
  workflow: WorkflowChoice;
  rewardWeights: RoleRewardWeights;
  answerRole?: string;
  /** Wall-clock limit of one program run; default: the environment's (maths 20 s, code 30 s). */
  programTimeoutMs?: number;
  /** Code tasks: how a Tester's declared output is judged (src/env/code-env.ts); default 'values'. */
  testerComparison?: TesterComparison;
  /** Episodes in flight at once (0 = all of a rollout). */
  maxInFlight: number;
  /** 'char' (marft's character tokenizer) or a model folder holding tokenizer files; default: model.path when set, else 'char'. */
  tokenizer: string;
  tinyModel: TinyModelShape;
}

/** What tests and embedding programs may swap; configuration files cannot. */
export interface WorkflowTaskDeps {
  /** Default: engineSampler(engine). */
  sampler?: (engine: SamplingEngine) => ActionSampler;
  /** Runs programs (Tool-User programs, Coder programs on Tester cases); default: Python in the sandbox. */
  runProgram?: ProgramRunner;
  /** Overrides the `tokenizer` option. */
  tokenizer?: Tokenizer;
  /** The problems, in place of the `dataset` options (a task built on this one with problems of its own: arith-pair, code-pair). */
  problems?: ProblemSets;
  /** Judges a program on a code problem's golden tests (the environment's team reward, CURE's program reward); default: src/verify/code in the sandbox. */
  judge?: CodeJudge;
}

export class WorkflowTask implements DistillableTask {
  readonly agents: readonly string[];
  /** AT-GRPO's tree sampling (src/workflow/tree-sampling.ts): the maths and code environments can be copied. */
  readonly treeSampling = true;
  readonly jointTreeSampling = true;
  /** CURE's rewards need the Coder and Tester pair on a code dataset (checked when asked, with the horizon). */
  readonly rewardSchemes: readonly RewardScheme[];
  readonly workflow: Workflow;
  readonly problems: ProblemSets;
  /** Each agent's role as its workflow names it (for records of episodes). */
  readonly roles: Readonly<Record<string, string>>;
  private readonly makeEnv: (p: Problem) => TaskEnv;
  private problemIndex: Map<string, Problem> | undefined;

  constructor(
    readonly options: WorkflowTaskOptions,
    readonly tokenizer: Tokenizer,
    private readonly deps: WorkflowTaskDeps = {},
  ) {
    this.problems = deps.problems ?? loadProblemSets(options.dataset, options.split, tokenizer);
    this.workflow = buildWorkflow(options.workflow, this.problems.domain);
    this.agents = this.workflow.agents.map((a) => a.name);
    this.roles = Object.fromEntries(this.workflow.agents.map((a) => [a.name, a.role]));
    this.rewardSchemes = options.workflow.name === 'coder-tester' ? ['cure'] : [];
    const answerRole = options.answerRole ?? defaultAnswerRole(options.workflow.name);
    const common = {
      rewardWeights: options.rewardWeights,
      ...(answerRole ? { answerRole } : {}),
      ...(options.programTimeoutMs ? { programTimeoutMs: options.programTimeoutMs } : {}),
      ...(options.testerComparison ? { testerComparison: options.testerComparison } : {}),
      ...(deps.runProgram ? { runProgram: deps.runProgram } : {}),
    };
    const envOptions: EnvOptions = { math: common, code: { ...common, ...(deps.judge ? { judge: deps.judge } : {}) } };
    this.makeEnv = envFactory(envOptions);
  }

  async rollout(engine: Engine, req: RolloutRequest): Promise<Episode[]> {
    const chosen = stepProblems(this.problems.train, req.batchSize, problemSeed(req.seed, req.step));
    if (req.treeBranches !== undefined) {
      // One tree per problem; its candidates are grouped by (problem, turn, agent).
      return tagGroups(await this.play(engine, chosen, req.policies, req.sampling, req.seed, { treeBranches: req.treeBranches, turnScore: treeScore(req), criticView: req.criticView ?? true }), chosen.map((_, i) => i));
    }
    if (req.jointTree !== undefined && this.workflow.horizon > 1) {
      // One tree of joint samples per problem (MAGRPO); a one-turn workflow's tree is G independent episodes (below).
      return tagGroups(await this.play(engine, chosen, req.policies, req.sampling, req.seed, { jointTree: req.jointTree, turnScore: treeScore(req), criticView: req.criticView ?? true }), chosen.map((_, i) => i));
    }
    const problems = chosen.flatMap((p) => Array.from({ length: req.rolloutsPerPrompt }, () => p));
    // The rolloutsPerPrompt episodes of the i-th problem chosen form one group (GRPO-family algorithms compare within it).
    const problemIndex = chosen.flatMap((_, i) => Array.from({ length: req.rolloutsPerPrompt }, () => i));
    const episodes = tagGroups(await this.play(engine, problems, req.policies, req.sampling, req.seed, { criticView: req.criticView ?? true }), problemIndex);
    return req.rewardScheme === 'cure' ? applyCureRewards(episodes, this.cureContext()) : episodes;
  }

  private cureContext(): CureContext {
    const byId = new Map(this.problems.train.map((p) => [p.id, p]));
    const timeoutMs = this.options.programTimeoutMs ?? CODE_PROGRAM_TIMEOUT_MS;
    return {
      problemOf: (id) => byId.get(id) as CodeProblem,
      run: this.deps.runProgram ?? defaultProgramRunner,
      goldenPassRate: async (program, problem) => {
        const v = await (this.deps.judge ?? sandboxJudge)(program, problem, timeoutMs);
        return v.total > 0 ? v.passed / v.total : 0;
      },
      timeoutMs,
      roles: Object.fromEntries(this.workflow.agents.map((a) => [a.name, a.role])),
    };
  }

  /** The problem as the agents read it (a maths question, a programming statement); held-out problems first. */
  problemText(problemId: string): string | undefined {
    this.problemIndex ??= new Map([...this.problems.train, ...this.problems.heldOut].map((p) => [p.id, p]));
    const p = this.problemIndex.get(problemId);
    if (!p) return undefined;
    return p.domain === 'math' ? p.question : p.statement;
  }

  async evaluate(engine: SamplingEngine, req: EvalRequest): Promise<Episode[]> {
    const problems = req.problems > 0 ? this.problems.heldOut.slice(0, req.problems) : this.problems.heldOut;
    // Nothing reads an evaluation episode's critic input.
    return this.play(engine, problems, req.policies, req.sampling, req.seed, { criticView: false });
  }

  /**
   * One episode per question that comes without a reference answer (marft serve --team,
   * src/serve/team.ts): the task's workflow and environment play it (programs run, feedback is given)
   * with `policies`; its score and rewards compare with nothing and mean nothing.
   */
  async answer(engine: SamplingEngine, questions: readonly string[], policies: Record<string, string>, sampling: Sampling, seed: number): Promise<Episode[]> {
    const problems: Problem[] = questions.map((question, i) => this.problems.domain === 'math'
      ? { domain: 'math', id: `request-${i}`, dataset: 'request', question, answer: '', meta: {} }
      : { domain: 'code', id: `request-${i}`, dataset: 'request', statement: question, tests: { kind: 'stdio', tests: [] }, meta: {} });
    return this.play(engine, problems, policies, sampling, seed, { criticView: false });
  }

  distillation(): DistillationSource {
    return {
      workflow: this.workflow,
      tokenizer: this.tokenizer,
      // One episode per problem; the problems of a step from its seed only, on the problem stream.
      trainEnvs: (count, seed) => stepProblems(this.problems.train, count, deriveSeed(seed, PROBLEM_STREAM)).map(this.makeEnv),
      // PAC rules exist for the two multi-turn pairs (docs/mas-opd.md); other workflows have none.
      attribute: this.attributor(),
    };
  }

  /** The pair's PAC rules: maths for Reasoner–Tool-User, code for Coder–Tester; null for other workflows. */
  private attributor(): Attributor | null {
    if (this.options.workflow.name === 'reasoner-tooluser') return mathAttributor;
    if (this.options.workflow.name === 'coder-tester') return codeAttributor;
    return null;
  }

  /** A model and a tokenizer that do not belong together would sample garbage silently. */
  private checkTokenizer(engine: SamplingEngine): void {
    const model = engine.info.vocabSize;
    const own = this.tokenizer.vocabSize;
    if (model < own) throw new TaskOptionError(`the model's vocabulary (${model}) is smaller than the tokenizer's (${own}): task.options.tokenizer must name the model's own tokenizer`);
    if (this.options.tokenizer === 'char' && !this.deps.tokenizer && model !== own) {
      throw new TaskOptionError(`task.options.tokenizer is 'char' (${own} ids) but the model has ${model}: set task.options.tokenizer to the model folder`);
    }
  }

  private async play(engine: SamplingEngine, problems: Problem[], policies: Record<string, string>, sampling: Sampling, seed: number, how: { treeBranches?: number | undefined; jointTree?: RolloutRequest['jointTree']; turnScore?: TurnScore; criticView: boolean }): Promise<Episode[]> {
    this.checkTokenizer(engine);
    // Every agent gets the trainer's adapter; an agent it leaves out acts with the frozen base.
    const acting = Object.fromEntries(this.agents.map((a) => [a, policies[a] ?? BASE_POLICY]));
    const sampler = this.deps.sampler ? this.deps.sampler(engine) : engineSampler(engine);
    const options = {
      sampler,
      tokenizer: this.tokenizer,
      params: { temperature: sampling.temperature, topP: sampling.topP, topK: sampling.topK, maxNewTokens: sampling.maxNewTokens, stopTokenIds: [], stopStrings: [], seed },
      criticView: how.criticView,
      ...(this.options.maxInFlight > 0 ? { maxInFlight: this.options.maxInFlight } : {}),
    };
    const workflow = withPolicies(this.workflow, acting);
    const envs = problems.map(this.makeEnv);
    if (how.jointTree) return jointTreeRollout(workflow, envs, { ...options, ...how.jointTree, score: how.turnScore! });
    return how.treeBranches === undefined ? rollout(workflow, envs, options) : treeRollout(workflow, envs, { ...options, branches: how.treeBranches, score: how.turnScore! });
  }
}

/** A tree request's ranking of copies (RolloutRequest.turnScore), which the trainer always sends with one. */
function treeScore(req: RolloutRequest): TurnScore {
  if (!req.turnScore) throw new Error('a tree rollout request (treeBranches or jointTree) needs turnScore, the ranking of a turn\'s copies');
  return req.turnScore;
}

/** The reward settings that moved from the task's options to the configuration's `reward` section (refused here in one line). */
const MOVED_REWARD_OPTIONS: Record<string, string> = {
  teamReward: 'reward.share (broadcast or split; reward.teamWeight: 0 leaves the team reward out)',
  teamWeight: 'reward.teamWeight',
  localWeight: 'reward.localWeight',
};

/** The seed that picks a step's problems: from (request seed, step) only, on its own stream. */
export function problemSeed(seed: number, step: number): number {
  return deriveSeed(seed, step, PROBLEM_STREAM);
}

const PROBLEM_STREAM = 0x7a5c;

function datasetChoice(raw: Options, nameKey: string, fileKey: string, fallback?: string): DatasetChoice | undefined {
  const name = stringOption(raw, nameKey) ?? fallback;
  const file = stringOption(raw, fileKey);
  if (name === undefined) {
    if (file !== undefined) throw optionError(nameKey, undefined, `the dataset layout of ${fileKey} (a dataset name such as 'gsm8k', 'deepscaler', 'livecodebench')`);
    return undefined;
  }
  return file ? { name, file } : { name };
}

function rewardWeightsOption(raw: Options): RoleRewardWeights {
  const v = raw.rewardWeights;
  if (v === undefined) return DEFAULT_ROLE_REWARD_WEIGHTS;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw optionError('rewardWeights', v, `an object with some of ${Object.keys(DEFAULT_ROLE_REWARD_WEIGHTS).join(', ')}`);
  const overrides: Record<string, Record<string, number>> = {};
  for (const [role, weights] of Object.entries(v as Record<string, unknown>)) {
    const defaults = (DEFAULT_ROLE_REWARD_WEIGHTS as unknown as Record<string, Record<string, number>>)[role];
    if (!defaults) throw new TaskOptionError(`task.options.rewardWeights.${role}: unknown role (known: ${Object.keys(DEFAULT_ROLE_REWARD_WEIGHTS).join(', ')})`);
    if (typeof weights !== 'object' || weights === null || Array.isArray(weights)) throw optionError(`rewardWeights.${role}`, weights, `an object with some of ${Object.keys(defaults).join(', ')}`);
    rejectUnknown(weights as Options, Object.keys(defaults), `rewardWeights.${role}`, `task.options.rewardWeights.${role}.`);
    overrides[role] = {};
    for (const key of Object.keys(weights)) overrides[role][key] = numberOption(weights as Options, key, 0, 0);
  }
  return roleRewardWeights(overrides);
}

export function parseWorkflowTaskOptions(raw: Options): WorkflowTaskOptions {
  refuseMovedRewardOptions(raw, MOVED_REWARD_OPTIONS);
  rejectUnknown(raw, WORKFLOW_TASK_OPTIONS, "task 'workflow'");
  const heldOut = datasetChoice(raw, 'heldOutDataset', 'heldOutFile');
  const options: WorkflowTaskOptions = {
    dataset: datasetChoice(raw, 'dataset', 'file', 'gsm8k')!,
    split: {
      heldOutFraction: numberOption(raw, 'heldOutFraction', 0.1, 0, 1),
      splitSeed: intOption(raw, 'splitSeed', 0, 0),
      maxProblemTokens: intOption(raw, 'maxProblemTokens', 0, 0),
      ...(heldOut ? { heldOut } : {}),
    },
    workflow: {
      name: oneOfOption(raw, 'workflow', WORKFLOW_NAMES, 'duo'),
      agentsPerRole: intOption(raw, 'agentsPerRole', 1, 1, 8),
      horizon: intOption(raw, 'horizon', 4, 1),
    },
    rewardWeights: rewardWeightsOption(raw),
    maxInFlight: intOption(raw, 'maxInFlight', 0, 0),
    tokenizer: stringOption(raw, 'tokenizer') ?? 'char',
    tinyModel: {
      hiddenSize: intOption(raw, 'hiddenSize', DEFAULT_TINY_SHAPE.hiddenSize, 4),
      layers: intOption(raw, 'layers', DEFAULT_TINY_SHAPE.layers, 1),
      contextLength: intOption(raw, 'contextLength', DEFAULT_TINY_SHAPE.contextLength, 16),
    },
  };
  if (options.tinyModel.hiddenSize % 4 !== 0) throw optionError('hiddenSize', options.tinyModel.hiddenSize, 'a multiple of 4');
  const answerRole = stringOption(raw, 'answerRole');
  if (answerRole) options.answerRole = answerRole;
  if (raw.programTimeoutMs !== undefined) options.programTimeoutMs = intOption(raw, 'programTimeoutMs', 0, 1);
  if (raw.testerComparison !== undefined) options.testerComparison = oneOfOption(raw, 'testerComparison', TESTER_COMPARISONS, 'values');
  // A single-agent workflow has one agent by definition; pairs and pipelines take several per role.
  if (options.workflow.agentsPerRole > 1 && (options.workflow.name === 'sa-st' || options.workflow.name === 'sa-mt')) {
    throw optionError('agentsPerRole', options.workflow.agentsPerRole, `1 for workflow '${options.workflow.name}' (a single agent; more agents per role: the pipelines and the pairs)`);
  }
  return options;
}

/** 'char' → taskCharTokenizer(); otherwise a folder with tokenizer files (relative: from the working directory). */
export function taskTokenizer(spec: string): Tokenizer {
  if (spec === 'char') return taskCharTokenizer();
  try {
    return loadTokenizer(spec);
  } catch (err) {
    throw new TaskOptionError(`task.options.tokenizer: ${JSON.stringify(spec)}: ${(err as Error).message.split('\n')[0]} (expected 'char' or a model folder with tokenizer files)`);
  }
}

export function createWorkflowTask(raw: Options = {}, deps: WorkflowTaskDeps = {}): WorkflowTask {
  const options = parseWorkflowTaskOptions(raw);
  // The dataset names are checked before the tokenizer is opened: a misspelt name is reported as
  // itself, not as whatever opening a tokenizer folder ran into first.
  datasetName(options.dataset.name, 'dataset');
  if (options.split.heldOut) datasetName(options.split.heldOut.name, 'heldOutDataset');
  return new WorkflowTask(options, deps.tokenizer ?? taskTokenizer(options.tokenizer), deps);
}

/** The registry's factory: the task, and a tiny random model for configurations that name none. */
export function workflowTask(raw: Options = {}, context: TaskContext = { modelPath: '' }): TaskBundle {
  // A named model brings its own tokenizer unless the options say otherwise.
  const withTokenizer = raw.tokenizer === undefined && context.modelPath ? { ...raw, tokenizer: context.modelPath } : raw;
  const task = createWorkflowTask(withTokenizer);
  const errors = task.problems.loadErrors;
  if (errors.length > 0) {
    const first = errors[0]!;
    console.warn(`task 'workflow': skipped ${errors.length} malformed record(s) (first: ${first.file}:${first.line}: ${first.message})`);
  }
  return { task, vocabSize: task.tokenizer.vocabSize, buildEngine: async (seed) => tinyEngine(task.tokenizer, task.options.tinyModel, seed) };
}
