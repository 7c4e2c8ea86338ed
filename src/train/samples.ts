// What a step's samples file holds (src/runs/samples.ts, docs/dashboard.md): the first episodes of
// the batch as src/runs/episode-samples.ts renders an episode, with the credit of this step added to
// each action the batch kept: the reward placed on it, the critic's value, the per-token advantages the
// update used (an action-level advantage stands for each of its tokens) and MAS-OPD's teacher gaps. An
// action the batch left out (no tokens) shows without credit.
import type { Task } from './task.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import { episodeSample } from '../runs/episode-samples.ts';
import type { SampleRecord } from '../runs/samples.ts';
import type { AlgorithmPlan, TrainAction } from './types.ts';

export function sampleRecords(episodes: readonly Episode[], actions: readonly TrainAction[], plan: Pick<AlgorithmPlan, 'roles'>, task: Pick<Task, 'tokenizer' | 'roles' | 'problemText'>, limit: number): SampleRecord[] {
  const credited = new Map<ActionRecord, TrainAction>(actions.map((a) => [a.record, a]));
  return episodes.slice(0, limit).map((ep) => {
    const record = episodeSample(ep, { tokenizer: task.tokenizer, roles: plan.roles ?? task.roles, prompt: task.problemText?.(ep.problemId) });
    record.actions.forEach((s, k) => {
      const c = credited.get(ep.actions[k]!);
      if (!c) return;
      const perToken = (x: ArrayLike<number> | undefined): number[] | null =>
        !x || x.length === 0 ? null : x.length === s.tokens.length ? Array.from(x) : x.length === 1 ? s.tokens.map(() => x[0]!) : null;
      s.reward = c.reward;
      s.value = c.values_K.length > 0 ? c.values_K[0]! : null;
      s.advantages = perToken(c.advantages_K);
      s.teacherGap = perToken(c.teacherGap_K);
    });
    return record;
  });
}
