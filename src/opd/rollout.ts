// MAS-OPD's rollout (the algorithm's rollout hook, src/algorithms/mas-opd.ts): the workflow played on
// environments wrapped so each turn's record is kept for PAC (./turn-recording-env.ts), keeping every
// action's chat messages, from which the teacher's contexts are built (./teacher-context.ts). Without a
// critic the centralised critic's input is not rendered.
import type { SamplingEngine } from '../engine/types.ts';
import type { Sampling } from '../train/task.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { engineSampler, rollout, type Episode, type TaskEnv, type Workflow } from '../workflow/index.ts';
import { TurnRecordingEnv } from './turn-recording-env.ts';

export async function distillationRollout(engine: SamplingEngine, tokenizer: Tokenizer, workflow: Workflow, envs: TaskEnv[], sampling: Sampling, seed: number): Promise<Episode[]> {
  return rollout(workflow, envs.map((e) => new TurnRecordingEnv(e)), {
    sampler: engineSampler(engine),
    tokenizer,
    keepMessages: true,
    criticView: false,
    params: { temperature: sampling.temperature, topP: sampling.topP, topK: sampling.topK, maxNewTokens: sampling.maxNewTokens, stopTokenIds: [], stopStrings: [], seed },
  });
}
