// train(): a configuration's algorithm (src/algorithms/check.ts planFor: the registered algorithm's
// plan, checked against the task) run through the one training loop (src/train/loop.ts). Every
// command, the demos and the tests train through here.
import { planFor } from '../algorithms/check.ts';
import { trainLoop, type TrainOptions, type TrainResult } from '../train/loop.ts';

export type { TrainOptions, TrainResult } from '../train/loop.ts';

export async function train(options: TrainOptions): Promise<TrainResult> {
  return trainLoop({ ...options, plan: planFor(options.config, options.task) });
}
