// The demo's task for the MARFT trainer (src/train/task.ts): two-step arithmetic solved by the
// Planner → Solver workflow, run by the Flex-MG runtime. Registered as "arith-duo"
// (src/run/task-registry.ts), so a training configuration can name it too
// (task: {name: arith-duo, options: {...}}).
//
// Options:
//   heldOut        problems set aside for evaluation, never trained on (default 1000)
//   trainAgents    the agents whose adapters train (default both). An agent left out acts with the
//                  frozen base and its actions are dropped from the training episodes (the ablations)
//   pretrainSteps  when the configuration names no model, the task pretrains one (default 2400)
//   baseSeed       the seed that base is pretrained from (default: the run's seed). Fixing it gives
//                  every run of a study the same base, as the papers' seeds share one pretrained model
//   baseCache      a folder where pretrained bases are kept and reused ("" = none): a base is stored
//                  as <baseCache>/arith-duo-<hash>-seed<s>/, the hash covering everything that shapes
//                  it (model shape, pretraining settings and steps, the noisy teacher, the split), so a study pretrains
//                  once instead of once per run (about 100 s each)
//   roles          'named' (default: the prescribed Planner and Solver) or 'anonymous' (the spec's
//                  position-indexed variant, labels a1 and a2). The base is pretrained on transcripts
//                  with the same labels, so the two variants are two bases (their own cache names)
//
// Each step's episodes carry the group key of their problem (rolloutsPerPrompt adjacent episodes), so
// the GRPO family (grpo, magrpo) runs on this task too.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createEngine } from '../../engine/index.ts';
import { cachedBase } from '../../runs/base-folder.ts';
import { tagGroups } from '../../train/episode-groups.ts';
import type { Engine } from '../../engine/types.ts';
import { deriveSeed, Rng } from '../../core/rng.ts';
import { type EvalRequest, type RolloutRequest, type Sampling, type Task, type TaskBundle } from '../../train/task.ts';
import { engineSampler, rollout, type ActionSampler, type Episode } from '../../workflow/index.ts';
import { ArithEnv } from './arith-env.ts';
import { DUO_AGENT_NAMES, type DuoAgentName, duoWorkflow } from './duo-workflow.ts';
import { DUO_ROLE_STYLES, type DuoRoleStyle, duoRoles } from './duo-prompts.ts';
import { demoModelConfig } from './model-config.ts';
import { DEFAULT_PRETRAIN, pretrain } from './pretrain.ts';
import { type Problem, type Split, DEFAULT_HELD_OUT, splitProblems } from './task.ts';
import { DEFAULT_TEACHER_NOISE } from './teacher.ts';
import { demoTokenizer } from './vocab.ts';

export interface ArithTaskOptions {
  heldOut: number;
  trainAgents: DuoAgentName[];
  pretrainSteps: number;
  /** Pretrain the base from this seed instead of the run's. */
  baseSeed?: number;
  /** Folder of reusable pretrained bases ('' = none). */
  baseCache?: string;
  /** Prescribed role labels or the anonymous, position-indexed ones (prompts and pretraining alike). */
  roles: DuoRoleStyle;
}

export const DEFAULT_ARITH_OPTIONS: ArithTaskOptions = { heldOut: DEFAULT_HELD_OUT, trainAgents: [...DUO_AGENT_NAMES], pretrainSteps: DEFAULT_PRETRAIN.steps, roles: 'named' };

/** Plays the Duo on the given problems (one episode each) through the Flex-MG runtime. */
export async function playDuo(sampler: ActionSampler, problems: Problem[], policies: Partial<Record<DuoAgentName, string>>, sampling: Sampling, seed: number, roles: DuoRoleStyle = 'named'): Promise<Episode[]> {
  const tokenizer = demoTokenizer();
  return rollout(duoWorkflow(policies, roles), problems.map((p) => new ArithEnv(p)), {
    sampler,
    tokenizer,
    params: { temperature: sampling.temperature, topP: sampling.topP, topK: sampling.topK, maxNewTokens: sampling.maxNewTokens, stopTokenIds: [], stopStrings: [], seed },
  });
}

export class ArithDuoTask implements Task {
  readonly agents: readonly DuoAgentName[];
  readonly split: Split;

  constructor(readonly options: ArithTaskOptions = DEFAULT_ARITH_OPTIONS) {
    this.agents = DUO_AGENT_NAMES.filter((a) => options.trainAgents.includes(a));
    this.split = splitProblems(options.heldOut);
  }

  /** Policies of the trained agents from the request; the others act with the frozen base. */
  private policies(requested: Record<string, string>): Partial<Record<DuoAgentName, string>> {
    return Object.fromEntries(this.agents.map((a) => [a, requested[a] ?? 'base']));
  }

  async rollout(engine: Engine, req: RolloutRequest): Promise<Episode[]> {
    const rng = new Rng(deriveSeed(req.seed, 0));
    const problems: Problem[] = [];
    const problemIndex_E: number[] = [];
    for (let i = 0; i < req.batchSize; i++) {
      const p = rng.pick(this.split.train);
      for (let g = 0; g < req.rolloutsPerPrompt; g++) {
        problems.push(p);
        problemIndex_E.push(i);
      }
    }
    const episodes = tagGroups(await playDuo(engineSampler(engine), problems, this.policies(req.policies), req.sampling, req.seed, this.options.roles), problemIndex_E);
    // Frozen agents' actions carry no gradient and have no adapter: the trainer never sees them.
    return episodes.map((e) => ({ ...e, actions: e.actions.filter((a) => this.agents.includes(a.agent as DuoAgentName)) }));
  }

  async evaluate(engine: Engine, req: EvalRequest): Promise<Episode[]> {
    const problems = req.problems > 0 ? this.split.heldOut.slice(0, req.problems) : this.split.heldOut;
    const policies = Object.fromEntries(DUO_AGENT_NAMES.map((a) => [a, req.policies[a] ?? 'base']));
    return playDuo(engineSampler(engine), problems, policies, req.sampling, req.seed, this.options.roles);
  }
}

function parseOptions(raw: Record<string, unknown>): ArithTaskOptions {
  const known = ['heldOut', 'trainAgents', 'pretrainSteps', 'baseSeed', 'baseCache', 'roles'];
  for (const k of Object.keys(raw)) if (!known.includes(k)) throw new Error(`task.options.${k}: unknown option of arith-duo (${known.join(', ')})`);
  const o = { ...DEFAULT_ARITH_OPTIONS };
  if (raw.heldOut !== undefined) {
    if (typeof raw.heldOut !== 'number' || !Number.isInteger(raw.heldOut) || raw.heldOut < 1 || raw.heldOut > 3000) throw new Error(`task.options.heldOut: got ${JSON.stringify(raw.heldOut)}, expected an integer in 1..3000`);
    o.heldOut = raw.heldOut;
  }
  if (raw.trainAgents !== undefined) {
    const list = raw.trainAgents;
    if (!Array.isArray(list) || list.length === 0 || !list.every((a) => (DUO_AGENT_NAMES as readonly unknown[]).includes(a))) {
      throw new Error(`task.options.trainAgents: got ${JSON.stringify(list)}, expected a non-empty list of ${DUO_AGENT_NAMES.map((a) => `'${a}'`).join(', ')}`);
    }
    o.trainAgents = list as DuoAgentName[];
  }
  if (raw.pretrainSteps !== undefined) {
    if (typeof raw.pretrainSteps !== 'number' || !Number.isInteger(raw.pretrainSteps) || raw.pretrainSteps < 0) throw new Error(`task.options.pretrainSteps: got ${JSON.stringify(raw.pretrainSteps)}, expected an integer >= 0`);
    o.pretrainSteps = raw.pretrainSteps;
  }
  if (raw.baseSeed !== undefined) {
    if (typeof raw.baseSeed !== 'number' || !Number.isInteger(raw.baseSeed) || raw.baseSeed < 0) throw new Error(`task.options.baseSeed: got ${JSON.stringify(raw.baseSeed)}, expected an integer >= 0`);
    o.baseSeed = raw.baseSeed;
  }
  if (raw.baseCache !== undefined) {
    if (typeof raw.baseCache !== 'string') throw new Error(`task.options.baseCache: got ${JSON.stringify(raw.baseCache)}, expected a folder path ('' = no cache)`);
    o.baseCache = raw.baseCache;
  }
  if (raw.roles !== undefined) {
    if (!(DUO_ROLE_STYLES as readonly unknown[]).includes(raw.roles)) throw new Error(`task.options.roles: got ${JSON.stringify(raw.roles)}, expected ${DUO_ROLE_STYLES.map((r) => `'${r}'`).join(' or ')}`);
    o.roles = raw.roles as DuoRoleStyle;
  }
  return o;
}

/** Builds the demo's model: a random-initialised tiny decoder pretrained on the noisy teacher's transcripts. */
export async function buildPretrainedEngine(task: ArithDuoTask, seed: number, steps: number, onProgress?: Parameters<typeof pretrain>[4]): Promise<{ engine: Engine; seconds: number; finalLoss: number }> {
  const tokenizer = demoTokenizer();
  const engine = createEngine(demoModelConfig(tokenizer), { seed });
  const result = await pretrain(engine, tokenizer, task.split.train, { ...DEFAULT_PRETRAIN, steps, seed, roles: duoRoles(task.options.roles) }, onProgress);
  return { engine, seconds: result.seconds, finalLoss: result.losses[result.losses.length - 1] ?? NaN };
}

/**
 * The cache folder's name for the base pretrained from `seed`: a hash of everything that shapes it
 * (the model's shape, the pretraining settings and steps, the noisy teacher, the held-out split), so a cached base is
 * never reused after any of them changes. The role labels enter only when anonymous, so the named
 * base keeps the name it had before the option existed (the studies' cached bases stay valid).
 */
export function cachedBaseName(options: ArithTaskOptions, seed: number): string {
  const shaping = JSON.stringify({
    model: demoModelConfig(demoTokenizer()),
    pretrain: { ...DEFAULT_PRETRAIN, steps: options.pretrainSteps },
    teacher: DEFAULT_TEACHER_NOISE,
    heldOut: options.heldOut,
    ...(options.roles === 'anonymous' ? { roles: duoRoles('anonymous') } : {}),
  });
  return `arith-duo-${createHash('sha256').update(shaping).digest('hex').slice(0, 12)}-seed${seed}`;
}

/** The pretrained base of a run at `seed`: from options.baseCache when it holds it, else pretrained (and stored there). */
async function pretrainedBase(task: ArithDuoTask, seed: number): Promise<Engine> {
  const { options } = task;
  const baseSeed = options.baseSeed ?? seed;
  if (!options.baseCache) return (await buildPretrainedEngine(task, baseSeed, options.pretrainSteps)).engine;
  return cachedBase(join(options.baseCache, cachedBaseName(options, baseSeed)), async () => (await buildPretrainedEngine(task, baseSeed, options.pretrainSteps)).engine);
}

export function arithDuo(raw: Record<string, unknown> = {}): TaskBundle {
  const options = parseOptions(raw);
  const task = new ArithDuoTask(options);
  return { task, vocabSize: demoTokenizer().vocabSize, buildEngine: (seed) => pretrainedBase(task, seed) };
}
