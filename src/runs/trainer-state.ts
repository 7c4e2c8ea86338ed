// What a run carries from step to step besides the engine's trainables and the (seed, step)
// that determine every sampling seed. Saved in every checkpoint's state.json, restored on resume,
// so a resumed run continues exactly as an uninterrupted one.
import { EMPTY_MOMENTS, type RunningMoments } from '../core/running-moments.ts';

export interface TrainerState {
  /** Running moments of the credit chains' returns (reward normalisation, ./reward-scale.ts). */
  rewardMoments: RunningMoments;
}

export const INITIAL_TRAINER_STATE: TrainerState = { rewardMoments: EMPTY_MOMENTS };
