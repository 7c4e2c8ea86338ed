// What a step's samples file holds (src/runs/samples.ts, docs/dashboard.md): the first episodes of
// the batch, each agent's turns with its tokens, behaviour log-probs, the reward placed on it, the
// critic's value and the per-token advantages the update used (or MAS-OPD's teacher gaps). Built from
// the step's episodes and its TrainActions; an action the batch left out (no tokens) shows without credit.
import type { ChatMessage, Tokenizer } from '../tokenizer/types.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import { tokenPieces, type SampleAction, type SampleRecord } from '../runs/samples.ts';
import type { AlgorithmPlan, TrainAction } from './types.ts';

/** The samples records of episodes (the step's first `limit`), credit from the batch's actions. */
export function sampleRecords(episodes: readonly Episode[], actions: readonly TrainAction[], plan: Pick<AlgorithmPlan, 'roles' | 'level'>, tokenizer: Pick<Tokenizer, 'decode'> | undefined, limit: number): SampleRecord[] {
  const credited = new Map<ActionRecord, TrainAction>(actions.map((a) => [a.record, a]));
  const decode = (ids: readonly number[]) => (tokenizer ? tokenizer.decode([...ids]) : ids.join(' '));
  const pieces = (ids: readonly number[]) => (tokenizer ? tokenPieces(tokenizer, ids) : ids.map(String));
  return episodes.slice(0, limit).map((ep) => {
    const observations = ep.info.observations as ChatMessage[][] | undefined;
    const { observations: _kept, ...info } = ep.info;
    return {
      problem: ep.problemId,
      prompt: ep.actions[0] ? decode(ep.actions[0].promptTokens) : '',
      group: ep.group ?? null,
      outcome: ep.score,
      turns: ep.steps.map((s) => ({ t: s.t, teamReward: s.teamReward, done: s.done, feedback: s.feedback ?? null, verdict: null })),
      actions: ep.actions.map((a, k): SampleAction => {
        const c = credited.get(a);
        const perToken = (x: ArrayLike<number> | undefined): number[] | null => {
          if (!x) return null;
          // Action-level credit: the action's one advantage stands for each of its tokens.
          return x.length === a.actionTokens.length ? Array.from(x) : x.length === 1 ? a.actionTokens.map(() => x[0]!) : null;
        };
        return {
          agent: a.agent, role: plan.roles?.[a.agent] ?? a.agent, t: a.step, policy: a.policy,
          messages: observations?.[k]?.map((m) => ({ role: m.role, content: m.content })) ?? null,
          text: a.text, tokens: a.actionTokens, pieces: pieces(a.actionTokens), logprobs: a.behaviourLogprobs,
          reward: c?.reward ?? 0, value: c && c.values_K.length > 0 ? c.values_K[0]! : null,
          advantages: c && c.advantages_K.length > 0 ? perToken(c.advantages_K) : null,
          teacherGap: perToken(c?.teacherGap_K), ratio: null,
        };
      }),
      info,
    };
  });
}
