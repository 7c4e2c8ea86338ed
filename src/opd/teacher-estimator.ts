// MAS-OPD's advantage estimator (spec section 5; MAS-OPD paper App. C, Alg. 1), one of the training
// pipeline's estimators (src/train/types.ts AdvantageEstimator): for every sampled turn of the batch
//   1. PAC: a verdict per finished turn from the attributor, in the teacher's context only (./pac.ts);
//   2. RAS: two teacher scorings of the response, u ⊕ r_i and u ⊕ κ(r_i) (one when λ = 0), with u the
//      student's own input (./teacher-context.ts);
//   3. the per-token advantages A = A_OPD + λ·A_role (./advantages.ts) become the turn's advantages_K
//      (and its returns: the discount is 0), A_OPD its teacherGap_K.
// The loss (importance-weighted policy gradient, each role's adapter on its own turns) and the update
// are the pipeline's (src/train/losses/, src/train/update/), as for every other algorithm. The teacher
// is the run's SamplingEngine and only scores (an embedded, torch or tabular engine, or a served model).
import { microBatches } from '../core/batching.ts';
import type { ScoreRequest, SamplingEngine } from '../engine/types.ts';
import type { StepMetrics } from '../runs/metrics-log.ts';
import type { AdvantageEstimator, TrainAction } from '../train/types.ts';
import type { ChatMessage, Tokenizer } from '../tokenizer/types.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import { opdAdvantages } from './advantages.ts';
import { renderVerdict, type Attributor, type PacConclusion } from './pac.ts';
import { conditionText, contrastRole, type RoleConditionTable } from './role-conditions.ts';
import type { OpdSettings } from './settings.ts';
import { teacherMessages } from './teacher-context.ts';

/** What the teacher's inputs are built from. */
export interface TeacherScoring {
  tokenizer: Tokenizer;
  conditions: RoleConditionTable;
  /** PAC rules or model; not used when settings.pac is false. */
  attribute: Attributor | null;
  settings: Pick<OpdSettings, 'lambda' | 'pac' | 'roleLine' | 'microBatchTokens'>;
}

/** The teacher's two inputs for one sampled turn: u ⊕ r_i (⊕ verdict) and u ⊕ κ(r_i) (⊕ verdict), as token ids. */
export interface TeacherRequest {
  action: ActionRecord;
  role: string;
  teacherPrompt: number[];
  contrastPrompt: number[] | null;
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
  // role-sentences looks for every role the table knows (a user's table may add roles).
  const names = Object.keys(conditions.conditions);
  const own = teacherMessages(studentMessages, conditionText(conditions, role), verdict, settings.roleLine, names);
  const contrast = settings.lambda !== 0 ? teacherMessages(studentMessages, conditionText(conditions, contrastRole(conditions, role)), verdict, settings.roleLine, names) : null;
  return { own, contrast };
}

/**
 * The teacher's inputs for the given sampled turns of each episode (`turns(e)`: the episode's
 * actions to score, with their roles), and every finished turn's PAC conclusion.
 */
async function requestsOf(episodes: readonly Episode[], turns: (e: number) => { action: ActionRecord; role: string }[], scoring: TeacherScoring): Promise<{ requests: TeacherRequest[]; conclusions: PacConclusion[] }> {
  const requests: TeacherRequest[] = [];
  const conclusions: PacConclusion[] = [];
  const encode = (m: ChatMessage[]) => scoring.tokenizer.encodeChat(m, { addGenerationPrompt: true });
  for (const [e, ep] of episodes.entries()) {
    const observations = ep.info.observations as ChatMessage[][] | undefined;
    if (!observations || observations.length !== ep.actions.length) throw new Error('MAS-OPD needs each action\'s chat messages: roll out with keepMessages: true');
    const verdicts = scoring.settings.pac && scoring.attribute ? await episodeVerdicts(ep, scoring.attribute) : null;
    if (verdicts) conclusions.push(...verdicts.conclusions);
    for (const { action, role } of turns(e)) {
      const k = ep.actions.indexOf(action);
      if (k < 0) throw new Error(`episode ${e}: a sampled turn of agent '${action.agent}' is not among its actions`);
      const inputs = teacherInputs(observations[k]!, role, verdicts?.texts.get(action.step) ?? null, scoring.conditions, scoring.settings);
      requests.push({ action, role, teacherPrompt: encode(inputs.own), contrastPrompt: inputs.contrast ? encode(inputs.contrast) : null });
    }
  }
  return { requests, conclusions };
}

/** The teacher's inputs for every turn with tokens of the episodes, roles from `roleOf` (for tests and inspection). */
export function teacherRequests(episodes: readonly Episode[], roleOf: ReadonlyMap<string, string>, scoring: TeacherScoring): Promise<{ requests: TeacherRequest[]; conclusions: PacConclusion[] }> {
  return requestsOf(episodes, (e) => episodes[e]!.actions.filter((a) => a.actionTokens.length > 0).map((action) => {
    const role = roleOf.get(action.agent);
    if (role === undefined) throw new Error(`agent '${action.agent}' has no role`);
    return { action, role };
  }), scoring);
}

/** Force-decodes each request's response under the teacher, both RAS passes, micro-batch by micro-batch. */
async function teacherLogprobs(teacher: SamplingEngine, requests: TeacherRequest[], capTokens: number): Promise<{ own: Float32Array[]; contrast: (Float32Array | null)[] }> {
  const own: Float32Array[] = new Array(requests.length);
  const contrast: (Float32Array | null)[] = new Array(requests.length).fill(null);
  const pass = async (prompt: (r: TeacherRequest) => number[] | null, store: (i: number, lp: Float32Array) => void) => {
    const todo = requests.map((r, i) => ({ r, i, p: prompt(r) })).filter((x): x is { r: TeacherRequest; i: number; p: number[] } => x.p !== null);
    const request = ({ r, p }: { r: TeacherRequest; p: number[] }): ScoreRequest => ({ tokens: [...p, ...r.action.actionTokens], scoreFrom: p.length });
    for (const mb of microBatches(todo, ({ r, p }) => p.length + r.action.actionTokens.length, capTokens)) {
      const logprobs = await teacher.score({ kind: 'base' }, mb.map(request));
      mb.forEach(({ i }, b) => store(i, logprobs[b]!));
    }
  };
  await pass((r) => r.teacherPrompt, (i, lp) => (own[i] = lp));
  await pass((r) => r.contrastPrompt, (i, lp) => (contrast[i] = lp));
  return { own, contrast };
}

const slug = (role: string) => role.toLowerCase().replace(/[^a-z0-9]+/g, '_');
const tokenMean = (xs: ArrayLike<number>) => {
  let s = 0;
  for (let k = 0; k < xs.length; k++) s += xs[k]!;
  return xs.length ? s / xs.length : 0;
};

/** Per role: mean A_OPD, A_role, teacher and student log-prob (means over responses of token means); PAC fractions over turns. */
function teacherMetrics(rows: { role: string; opd: ArrayLike<number>; role_: ArrayLike<number>; teacher: ArrayLike<number>; student: ArrayLike<number> }[], conclusions: PacConclusion[]): StepMetrics {
  const m: StepMetrics = {};
  for (const role of [...new Set(rows.map((r) => r.role))].sort()) {
    const rs = rows.filter((r) => r.role === role && r.student.length > 0);
    const avg = (f: (r: (typeof rs)[number]) => number) => (rs.length ? rs.reduce((s, r) => s + f(r), 0) / rs.length : 0);
    const key = slug(role);
    m[`a_opd_${key}`] = avg((r) => tokenMean(r.opd));
    m[`a_role_${key}`] = avg((r) => tokenMean(r.role_));
    // At a response's first token, where a reply commits to what it will do (in the study: which
    // operator the derivation reduces first), A_role is not diluted by the tokens that follow.
    m[`a_role_first_${key}`] = avg((r) => (r.role_.length > 0 ? r.role_[0]! : 0));
    m[`teacher_logprob_${key}`] = avg((r) => tokenMean(r.teacher));
    m[`student_logprob_${key}`] = avg((r) => tokenMean(r.student));
    m[`responses_${key}`] = rs.length;
  }
  if (conclusions.length > 0) {
    const counts = new Map<string, number>();
    for (const c of conclusions) counts.set(c, (counts.get(c) ?? 0) + 1);
    for (const [c, n] of [...counts].sort()) m[`pac_${c.toLowerCase()}`] = n / conclusions.length;
  }
  return m;
}

export const TEACHER_ESTIMATOR = 'teacher-kl';

/**
 * The estimator of a run: `scoring()` gives what the teacher's inputs are built from (null: the task
 * offers no workflow to distil, refused when the plan is prepared); the teacher engine comes with each
 * step's credit context.
 */
export function teacherScoredEstimator(scoring: () => TeacherScoring | null): AdvantageEstimator & { name: string } {
  return {
    name: TEACHER_ESTIMATOR,
    summary: 'MAS-OPD: per-token teacher − student log-prob under the role-conditioned teacher (A_OPD), plus λ·A_role (RAS), PAC verdicts in the teacher context',
    needsCritic: false,
    needsGroups: false,
    levels: ['token'],
    async assign(actions: TrainAction[], { episodes, teacher }) {
      const s = scoring();
      if (!s) throw new Error('MAS-OPD: the task offers no workflow whose roles a teacher can score');
      if (!teacher) throw new Error('MAS-OPD: no teacher model in this run (teacher.path)');
      const byEpisode = new Map<number, TrainAction[]>();
      for (const a of actions) byEpisode.set(a.episode, [...(byEpisode.get(a.episode) ?? []), a]);
      const { requests, conclusions } = await requestsOf(episodes, (e) => (byEpisode.get(e) ?? []).map((a) => ({ action: a.record, role: a.role })), s);
      // requestsOf walks the episodes in order and each episode's actions in batch order: the batch's order.
      const ordered = [...byEpisode.keys()].sort((x, y) => x - y).flatMap((e) => byEpisode.get(e)!);
      const scored = await teacherLogprobs(teacher, requests, s.settings.microBatchTokens);
      const rows = ordered.map((a, i) => {
        const adv = opdAdvantages(scored.own[i]!, scored.contrast[i] ?? null, a.behaviourLogprobs_K, s.settings.lambda);
        a.advantages_K = adv.total;
        // Discount 0: each token's return is its own advantage.
        a.returns_K = Float64Array.from(adv.total);
        a.teacherGap_K = adv.opd;
        return { role: a.role, opd: adv.opd, role_: adv.role, teacher: scored.own[i]!, student: a.behaviourLogprobs_K };
      });
      return teacherMetrics(rows, conclusions);
    },
  };
}
