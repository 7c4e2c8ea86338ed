// Reward normalisation with running statistics (App. B normalises rewards; issue 13 says how).
//
// Two properties the per-batch whitening this replaces did not have:
//   - zero stays zero: rewards are divided by a scale and never shifted, so the 0 of an action
//     that receives no reward (an intermediate agent of a joint chain) is still 0 afterwards, and
//     the sign of every reward is kept;
//   - no jumps: the scale is the standard deviation of every credit chain's return seen so far in
//     the run (Welford's running moments over all steps), not of this batch alone, so the critic's
//     regression targets keep their meaning from one step to the next.
// A chain's return is the sum of its credited rewards (a whole episode for joint chains, one
// agent's actions of an episode for per-agent chains): the quantity the critic's values estimate.
// The moments are part of the run's state: a resumed run restores them from its checkpoint.

export interface RunningMoments {
  count: number;
  mean: number;
  /** Sum of squared deviations from the mean (Welford's M2). */
  m2: number;
}

export const EMPTY_MOMENTS: RunningMoments = { count: 0, mean: 0, m2: 0 };

/** The moments after adding the samples (Welford's update, one sample at a time). */
export function updateMoments(m: RunningMoments, samples: ArrayLike<number>): RunningMoments {
  let { count, mean, m2 } = m;
  for (let i = 0; i < samples.length; i++) {
    const x = samples[i]!;
    count++;
    const d = x - mean;
    mean += d / count;
    m2 += d * (x - mean);
  }
  return { count, mean, m2 };
}

/** Population standard deviation of everything added so far. */
export function momentsStd(m: RunningMoments): number {
  return m.count > 0 ? Math.sqrt(m.m2 / m.count) : 0;
}

/** Below this deviation (every return so far identical) rewards are left unscaled. */
export const MIN_REWARD_STD = 1e-6;

/** The factor rewards are multiplied by: 1 / std of the returns so far, or 1 while they have not varied. */
export function rewardScale(m: RunningMoments): number {
  const std = momentsStd(m);
  return std > MIN_REWARD_STD ? 1 / std : 1;
}
