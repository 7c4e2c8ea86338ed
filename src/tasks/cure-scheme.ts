// CURE's rewards on the workflow task (algorithm cure): after a rollout of the coder-tester pair with
// horizon 1 (the Coder and the Tester act once, in parallel, from the problem alone), the programs
// and the unit tests of the rolloutsPerPrompt episodes of one problem (its EpisodeGroup) are run
// against each other in the sandbox, the programs are judged on the golden tests, and every action's
// role-local reward is replaced by CURE's (src/env/cure-rewards.ts): the program's golden pass rate,
// the test's CURE reward (0 for every test of a problem that no program solves: not scored, so the
// Testers' group is flat and left out of the update). The cure plan places each action's own reward
// alone (reward placement `local`, src/train/batch.ts: no team reward, no weights); the
// group-relative estimator then standardises the Coders' and the Testers' rewards within their own
// groups (its key separates agents). The horizon is checked before any rollout
// (src/algorithms/check.ts); the check below guards callers that bypass it.
import { cureGroupRewards } from '../env/cure-rewards.ts';
import type { ProgramRunner } from '../env/program-runner.ts';
import type { CodeProblem } from '../env/datasets/types.ts';
import { extractPythonCode } from '../workflow/builtin/formats.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';

export interface CureContext {
  problemOf: (id: string) => CodeProblem;
  run: ProgramRunner;
  /** Golden pass rate of a program (the code verifier on the problem's tests). */
  goldenPassRate: (program: string, problem: CodeProblem) => Promise<number>;
  timeoutMs: number;
  /** Role of each agent of the workflow (Coder / Tester). */
  roles: Record<string, string>;
}

/** Replaces the rewards of the Coders' and Testers' actions by CURE's, group by group; returns the episodes. */
export async function applyCureRewards(episodes: Episode[], ctx: CureContext): Promise<Episode[]> {
  const groups = new Map<string, Episode[]>();
  for (const ep of episodes) {
    if (ep.group === undefined) throw new Error(`CURE: episode of problem '${ep.problemId}' has no group`);
    if (ep.steps.length !== 1) throw new Error(`CURE: an episode took ${ep.steps.length} turns; CURE's Coder and Tester act once (set task.options.horizon: 1)`);
    groups.set(ep.group, [...(groups.get(ep.group) ?? []), ep]);
  }
  await Promise.all([...groups.values()].map(async (members) => {
    const problem = ctx.problemOf(members[0]!.problemId);
    const coders: ActionRecord[] = members.flatMap((ep) => ep.actions.filter((a) => ctx.roles[a.agent] === 'Coder'));
    const testers: ActionRecord[] = members.flatMap((ep) => ep.actions.filter((a) => ctx.roles[a.agent] === 'Tester'));
    const goldenPassRates = await Promise.all(coders.map((a) => {
      const p = extractPythonCode(a.text);
      return p === null ? 0 : ctx.goldenPassRate(p, problem);
    }));
    const r = await cureGroupRewards({ programs: coders.map((a) => a.text), goldenPassRates, tests: testers.map((a) => a.text) }, ctx.run, ctx.timeoutMs);
    // Recorded as each action's own reward; the cure plan places it alone (AlgorithmPlan.reward: local).
    coders.forEach((a, l) => (a.localReward = r.programs[l]!));
    testers.forEach((a, k) => (a.localReward = r.tests[k]!));
    for (const ep of members) ep.info.cure = { passes: r.passes, programRewards: r.programs, testRewards: r.tests, testsScored: r.testsScored };
  }));
  return episodes;
}

