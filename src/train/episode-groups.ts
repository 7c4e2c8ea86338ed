// Episode groups (GRPO-family sampling): the G episodes a task drew for one problem in one step.
// The key is explicit (Episode.group, set by the task where it repeats the problem) rather than
// read off the episodes' order, so a task may return episodes in any order and the same problem
// drawn twice in one step forms two groups.
import type { Episode } from '../workflow/trajectory.ts';

export interface EpisodeGroup {
  /** Episode.group of its members, unique within the step. */
  key: string;
  problemId: string;
  /** Indices of the member episodes in the step's episode list. */
  episodes: number[];
}

/** The group key a task gives the rolloutsPerPrompt episodes of the p-th problem it drew for a step. */
export function problemGroupKey(p: number): string {
  return `problem-${p}`;
}

/** Tags the episodes of one step: the k-th problem drawn gets problemGroupKey(problemIndex_E[k]). */
export function tagGroups(episodes: Episode[], problemIndex_E: readonly number[]): Episode[] {
  if (problemIndex_E.length !== episodes.length) throw new Error(`tagGroups: ${episodes.length} episodes but ${problemIndex_E.length} problem indices`);
  episodes.forEach((ep, e) => (ep.group = problemGroupKey(problemIndex_E[e]!)));
  return episodes;
}

/**
 * The groups of one step's episodes, in order of first appearance. Every episode must carry a group
 * key (a task that does not tag its episodes cannot run a group algorithm), and a group holds one problem.
 */
export function episodeGroups(episodes: readonly Episode[]): EpisodeGroup[] {
  const byKey = new Map<string, EpisodeGroup>();
  episodes.forEach((ep, e) => {
    if (ep.group === undefined) {
      throw new Error(`episode ${e} (problem '${ep.problemId}') has no group key: this task does not tag its episodes with Episode.group, which a group-sampling algorithm needs`);
    }
    const g = byKey.get(ep.group);
    if (!g) byKey.set(ep.group, { key: ep.group, problemId: ep.problemId, episodes: [e] });
    else if (g.problemId !== ep.problemId) throw new Error(`episode group '${ep.group}' mixes problems '${g.problemId}' and '${ep.problemId}'`);
    else g.episodes.push(e);
  });
  return [...byKey.values()];
}
