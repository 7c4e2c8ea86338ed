// A frozen copy of the MAS-OPD step as it was before MAS-OPD joined the training pipeline (src/opd/ at
// commit eed69ee): the differential oracle of test/opd/pipeline-equality.test.ts, which checks that the
// pipeline (src/train/loop.ts with the mas-opd plan) gives the same adapters. Not used by src/.
// One MAS-OPD update on episodes already rolled out (MAS-OPD paper App. C, Alg. 1):
//   1. PAC: a verdict per finished turn from the attributor (teacher's context only);
//   2. RAS: two teacher scorings per response, u ⊕ r_i and u ⊕ κ(r_i) (one when λ = 0);
//   3. the advantages A_OPD, A_role and A per token (./advantages.ts);
//   4. one synchronous update of every role's adapter per minibatch (./objective.ts), each role's
//      gradient reaching only its own adapter.
// Everything goes through the engine interface: the teacher is a SamplingEngine that only scores
// (its `score`: an embedded, torch or tabular engine, or a served model, src/run/teacher.ts).
import type { Engine, SamplingEngine, ScoreRequest } from '../../../src/engine/types.ts';
import { deriveSeed, mulberry32 } from '../../../src/core/rng.ts';
import { microBatches } from '../../../src/core/batching.ts';
import type { StepMetrics } from '../../../src/runs/metrics-log.ts';
import type { ChatMessage, Tokenizer } from '../../../src/tokenizer/types.ts';
import type { Episode } from '../../../src/workflow/trajectory.ts';
import { opdAdvantages } from '../../../src/opd/advantages.ts';
import { normaliserOf, opdObjective } from './objective.ts';
import { renderVerdict, type Attributor, type PacConclusion } from '../../../src/opd/pac.ts';
import { conditionText, contrastRole, type RoleConditionTable } from '../../../src/opd/role-conditions.ts';
import type { OpdSettings } from '../../../src/opd/settings.ts';
import { teacherMessages } from '../../../src/opd/teacher-context.ts';

/** One response of one role at one turn, with everything the update needs. */
export interface OpdResponse {
  episode: number;
  t: number;
  agent: string;
  role: string;
  policy: string;
  promptTokens: number[];
  actionTokens: number[];
  behaviour: Float32Array;
  /** The teacher's inputs: u ⊕ r_i (⊕ verdict) and u ⊕ κ(r_i) (⊕ verdict). */
  teacherPrompt: number[];
  contrastPrompt: number[] | null;
  teacher?: Float32Array;
  teacherContrast?: Float32Array;
  advantages?: ReturnType<typeof opdAdvantages>;
}

export interface OpdStepContext {
  student: Engine;
  teacher: SamplingEngine;
  tokenizer: Tokenizer;
  /** Role of every agent name (the workflow's agents). */
  roleOf: ReadonlyMap<string, string>;
  conditions: RoleConditionTable;
  /** PAC rules or model; ignored when settings.pac is false. */
  attribute: Attributor | null;
  settings: OpdSettings;
}

/** The verdict text of each finished turn of an episode that is followed by another turn, and every turn's conclusion (for the metrics). */
export async function episodeVerdicts(episode: Episode, attribute: Attributor): Promise<{ texts: Map<number, string>; conclusions: PacConclusion[] }> {
  const texts = new Map<number, string>();
  const conclusions: PacConclusion[] = [];
  for (const step of episode.steps) {
    const a = await attribute(episode, step.t);
    if (!a) continue;
    conclusions.push(a.conclusion);
    if (!step.done) texts.set(step.t + 1, renderVerdict(a));
  }
  return { texts, conclusions };
}

/** The teacher's chat messages for a response (exported for tests and inspection). */
export function teacherInputs(
  studentMessages: readonly ChatMessage[],
  role: string,
  verdict: string | null,
  conditions: RoleConditionTable,
  settings: Pick<OpdSettings, 'lambda' | 'roleLine'>,
): { own: ChatMessage[]; contrast: ChatMessage[] | null } {
  const own = teacherMessages(studentMessages, conditionText(conditions, role), verdict, settings.roleLine);
  const contrast = settings.lambda !== 0 ? teacherMessages(studentMessages, conditionText(conditions, contrastRole(conditions, role)), verdict, settings.roleLine) : null;
  return { own, contrast };
}

/** Flattens episodes into responses and builds their teacher inputs (PAC verdicts included when on). */
export async function buildResponses(episodes: Episode[], ctx: OpdStepContext): Promise<{ responses: OpdResponse[]; conclusions: PacConclusion[] }> {
  const responses: OpdResponse[] = [];
  const conclusions: PacConclusion[] = [];
  for (const [e, ep] of episodes.entries()) {
    const observations = ep.info.observations as ChatMessage[][] | undefined;
    if (!observations || observations.length !== ep.actions.length) throw new Error('MAS-OPD needs each action\'s chat messages: roll out with keepMessages: true');
    const verdicts = ctx.settings.pac && ctx.attribute ? await episodeVerdicts(ep, ctx.attribute) : null;
    if (verdicts) conclusions.push(...verdicts.conclusions);
    ep.actions.forEach((a, k) => {
      if (a.actionTokens.length === 0) return;
      const role = ctx.roleOf.get(a.agent);
      if (role === undefined) throw new Error(`agent '${a.agent}' has no role`);
      const inputs = teacherInputs(observations[k]!, role, verdicts?.texts.get(a.step) ?? null, ctx.conditions, ctx.settings);
      const encode = (m: ChatMessage[]) => ctx.tokenizer.encodeChat(m, { addGenerationPrompt: true });
      responses.push({
        episode: e, t: a.step, agent: a.agent, role, policy: a.policy,
        promptTokens: a.promptTokens, actionTokens: a.actionTokens, behaviour: Float32Array.from(a.behaviourLogprobs),
        teacherPrompt: encode(inputs.own), contrastPrompt: inputs.contrast ? encode(inputs.contrast) : null,
      });
    });
  }
  return { responses, conclusions };
}

/** Force-decodes every response under the teacher (both RAS passes) and fills in the advantages. */
export async function scoreWithTeacher(responses: OpdResponse[], ctx: OpdStepContext): Promise<void> {
  const pass = async (prompt: (r: OpdResponse) => number[] | null, store: (r: OpdResponse, lp: Float32Array) => void) => {
    const todo = responses.filter((r) => prompt(r) !== null);
    const request = (r: OpdResponse): ScoreRequest => {
      const p = prompt(r)!;
      return { tokens: [...p, ...r.actionTokens], scoreFrom: p.length };
    };
    for (const mb of microBatches(todo, (r) => prompt(r)!.length + r.actionTokens.length, ctx.settings.microBatchTokens)) {
      const logprobs = await ctx.teacher.score({ kind: 'base' }, mb.map(request));
      mb.forEach((r, b) => store(r, logprobs[b]!));
    }
  };
  await pass((r) => r.teacherPrompt, (r, lp) => (r.teacher = lp));
  await pass((r) => r.contrastPrompt, (r, lp) => (r.teacherContrast = lp));
  for (const r of responses) r.advantages = opdAdvantages(r.teacher!, r.teacherContrast ?? null, r.behaviour, ctx.settings.lambda);
}

/** Splits the responses into minibatches by episode (a seeded shuffle of the episodes). */
export function minibatchesByEpisode(responses: OpdResponse[], episodes: number, perMinibatch: number, seed: number): OpdResponse[][] {
  const count = Math.max(1, Math.ceil(episodes / Math.max(1, perMinibatch)));
  if (count === 1) return [responses];
  const order = Array.from({ length: episodes }, (_, i) => i);
  const rng = mulberry32(seed);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const slot = new Map(order.map((e, pos) => [e, Math.floor(pos / perMinibatch)]));
  return Array.from({ length: count }, (_, m) => responses.filter((r) => slot.get(r.episode) === m)).filter((mb) => mb.length > 0);
}

export interface UpdateStats {
  loss: number;
  gradNorm: number;
  meanRatio: number;
}

/** One update per minibatch: every role's adapter takes one optimiser step on its own responses. */
export async function updatePolicies(minibatches: OpdResponse[][], ctx: OpdStepContext): Promise<UpdateStats> {
  const { student, settings } = ctx;
  const temperature = settings.temperature > 0 ? settings.temperature : 1;
  let loss = 0, gradNorm = 0, ratioSum = 0, ratioCount = 0;
  for (const [m, mb] of minibatches.entries()) {
    const normaliser = normaliserOf(mb.map((r) => ({ role: r.role, advantages: r.advantages!.total })));
    const byPolicy = new Map<string, OpdResponse[]>();
    for (const r of mb) {
      const list = byPolicy.get(r.policy) ?? [];
      list.push(r);
      byPolicy.set(r.policy, list);
    }
    for (const [policy, group] of byPolicy) {
      for (const micro of microBatches(group, (r) => r.promptTokens.length + r.actionTokens.length, settings.microBatchTokens)) {
        const out = await student.forward({ kind: 'adapter', name: policy }, micro.map((r) => ({ tokens: [...r.promptTokens, ...r.actionTokens], scoreFrom: r.promptTokens.length })), { temperature, retainGraph: true });
        const result = opdObjective(
          micro.map((r, b) => ({ role: r.role, advantages: r.advantages!.total, logprobs: out.logprobs![b]!, behaviour: r.behaviour })),
          { importanceRatio: m > 0, normaliser },
        );
        loss += result.loss;
        ratioSum += result.meanRatio * micro.length;
        ratioCount += micro.length;
        await student.backward(out.handle!, { dLogprobs: result.dLogprobs.map((d) => Float32Array.from(d)) });
      }
      const step = await student.optimStep({ kind: 'adapter', name: policy }, settings.optim);
      gradNorm = Math.max(gradNorm, step.gradNorm);
    }
  }
  return { loss: loss / Math.max(1, minibatches.length), gradNorm, meanRatio: ratioCount > 0 ? ratioSum / ratioCount : 1 };
}

const slug = (role: string) => role.toLowerCase().replace(/[^a-z0-9]+/g, '_');

/** Per role: mean A_OPD, A_role, teacher and student log-prob (means over responses of token means); PAC fractions over turns. */
export function opdMetrics(responses: OpdResponse[], conclusions: PacConclusion[]): StepMetrics {
  const m: StepMetrics = {};
  const tokenMean = (xs: ArrayLike<number>) => {
    let s = 0;
    for (let k = 0; k < xs.length; k++) s += xs[k]!;
    return xs.length ? s / xs.length : 0;
  };
  const roles = [...new Set(responses.map((r) => r.role))].sort();
  for (const role of roles) {
    const rs = responses.filter((r) => r.role === role && r.actionTokens.length > 0);
    const avg = (f: (r: OpdResponse) => number) => (rs.length ? rs.reduce((s, r) => s + f(r), 0) / rs.length : 0);
    const key = slug(role);
    m[`a_opd_${key}`] = avg((r) => tokenMean(r.advantages!.opd));
    m[`a_role_${key}`] = avg((r) => tokenMean(r.advantages!.role));
    m[`teacher_logprob_${key}`] = avg((r) => tokenMean(r.teacher!));
    m[`student_logprob_${key}`] = avg((r) => tokenMean(r.behaviour));
    m[`responses_${key}`] = rs.length;
  }
  if (conclusions.length > 0) {
    const counts = new Map<string, number>();
    for (const c of conclusions) counts.set(c, (counts.get(c) ?? 0) + 1);
    for (const [c, n] of [...counts].sort()) m[`pac_${c.toLowerCase()}`] = n / conclusions.length;
  }
  return m;
}

/** The whole update of one step on rolled-out episodes; returns its metrics. */
export async function opdUpdate(episodes: Episode[], ctx: OpdStepContext, seed: number): Promise<StepMetrics> {
  const { responses, conclusions } = await buildResponses(episodes, ctx);
  await scoreWithTeacher(responses, ctx);
  const stats = await updatePolicies(minibatchesByEpisode(responses, episodes.length, ctx.settings.minibatchSize, deriveSeed(seed, 7)), ctx);
  return { ...opdMetrics(responses, conclusions), loss: stats.loss, grad_norm: stats.gradNorm, importance_ratio: stats.meanRatio };
}
