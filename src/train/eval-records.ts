// What `marft eval --output FILE` writes: one JSON line per (system, problem) holding the problem,
// each decoding seed's episode as a samples line (src/runs/samples.ts: each agent's text per turn,
// the feedback, the verdict, the score), the per-seed scores and the problem's pass@k, so that every
// number of the evaluation's summary can be recomputed from, and traced to, what the agents said.
// `marft show FILE` reads the file as the episodes it holds. docs/training.md lists every key.
import { episodeSample } from '../runs/episode-samples.ts';
import { EVAL_RECORDS_FORMAT, EVAL_RECORDS_VERSION, SAMPLES_FORMAT, SAMPLES_VERSION, sampleJson } from '../runs/samples.ts';
import { writeFileAtomic } from '../runs/atomic-write.ts';
import { SOLVED_SCORE, type EvalResult } from './evaluate.ts';
import type { Sampling, Task } from './task.ts';
import { passAtKCurve } from '../core/pass-at-k.ts';

/** Which system was scored: the untrained one (step null) or a checkpoint. */
export interface EvaluatedSystem {
  /** "untrained", or "step N". */
  name: string;
  step: number | null;
  checkpoint: string | null;
}

export interface EvalProblemRecord {
  format: typeof EVAL_RECORDS_FORMAT;
  version: typeof EVAL_RECORDS_VERSION;
  system: string;
  step: number | null;
  checkpoint: string | null;
  protocol: string;
  sampling: Sampling;
  problem: { index: number; id: string; text: string | null };
  /** The sampling seed of each decoding seed. */
  seeds: number[];
  /** The problem's score under each decoding seed. */
  scores: number[];
  /** Whether each seed's sample counts as correct for pass@k (score ≥ SOLVED_SCORE). */
  correct: boolean[];
  /** This problem's pass@k for k = 1..n (entry k − 1). */
  passAtK: number[];
  /** One samples line per decoding seed, in seed order. */
  episodes: Record<string, unknown>[];
}

/** The verdict shown on an evaluation episode's last turn. */
export const verdictOf = (score: number): string => (score >= SOLVED_SCORE ? 'correct' : `wrong (score ${score})`);

/** One record per problem of `result` (which must hold its episodes: evaluatePolicies with keepEpisodes). */
export function evalRecords(result: EvalResult, task: Pick<Task, 'tokenizer' | 'roles' | 'problemText'>, system: EvaluatedSystem): EvalProblemRecord[] {
  const episodes = result.episodes;
  if (!episodes) throw new Error('evalRecords: the evaluation kept no episodes (evaluatePolicies with keepEpisodes: true)');
  const n = result.seeds.length;
  return result.problemIds.map((id, index) => {
    const text = task.problemText?.(id) ?? null;
    const scores = result.scores.map((bySeed) => bySeed[index]!);
    const correct = scores.map((s) => s >= SOLVED_SCORE);
    return {
      format: EVAL_RECORDS_FORMAT,
      version: EVAL_RECORDS_VERSION,
      system: system.name,
      step: system.step,
      checkpoint: system.checkpoint,
      protocol: result.protocol,
      sampling: result.sampling,
      problem: { index, id, text },
      seeds: result.seeds,
      scores,
      correct,
      passAtK: passAtKCurve(n, correct.filter(Boolean).length),
      episodes: episodes.map((bySeed, s) => {
        const episode = bySeed[index]!;
        const last = episode.steps.length > 0 ? episode.steps[episode.steps.length - 1]!.t : -1;
        const record = episodeSample(episode, {
          tokenizer: task.tokenizer,
          roles: task.roles,
          prompt: text ?? '',
          group: `problem-${index}`,
          verdict: (t) => (t === last ? verdictOf(episode.outcome) : null),
          info: { evalSeed: s, seed: result.seeds[s]! },
        });
        return sampleJson({ format: SAMPLES_FORMAT, version: SAMPLES_VERSION, step: system.step, episode: index * n + s, ...record });
      }),
    };
  });
}

/** Writes the records as JSON lines, whole and atomically. */
export async function writeEvalRecords(file: string, records: readonly EvalProblemRecord[]): Promise<void> {
  await writeFileAtomic(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}
