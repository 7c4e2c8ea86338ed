// Concurrent requests into the engine's batched sampling. A request's prompts wait here a few
// milliseconds (the window) for others; then every waiting request that shares a parameter set goes
// to the engine in one engine.sample call, and the calls run one at a time (requests that arrive
// during a call are gathered for the next). The embedded engine samples every prompt of a call from its
// own generator, Rng.derive(seed, index in the call), so:
//   - greedy requests (temperature 0) share calls freely: no generator is read;
//   - requests that leave the seed to the server share calls too, under a seed the server picks;
//   - a seeded request at temperature > 0 gets a call of its own, its prompts at indices 0.., so its
//     tokens are exactly engine.sample(target, prompts, {seed}) whatever else arrives with it (what
//     the project's OpenAI engine pointed at this server relies on to reproduce the embedded engine).
// A parameter set is the target and the sampling parameters except max tokens and stop strings: a call
// generates up to the largest max tokens of its requests, and each request's samples are cut where its
// own limit and stop strings would have stopped the engine (the same tokens: each prompt's generator
// and cache are its own). Scoring requests (prompt log-probs) are scored one call per target.
import type { PolicyTarget, SampleParams, SampleResult, SamplingEngine, ScoreRequest } from '../engine/types.ts';
import { cutAtStopString } from '../engine/index.ts';

export type Decode = (ids: number[]) => string;

/** Which engine call served a request: its number since the server started, and how many requests and prompts it carried. */
export interface BatchInfo {
  call: number;
  requests: number;
  prompts: number;
}

export interface BatchedSample {
  results: SampleResult[];
  batch: BatchInfo;
}

export interface BatcherStats {
  /** Sampling requests received (one per HTTP request, or per workflow round in --team). */
  requests: number;
  /** engine.sample calls made for them. */
  engineCalls: number;
  /** engine.score calls (prompt log-probs). */
  scoreCalls: number;
}

interface SampleJob {
  kind: 'sample';
  target: PolicyTarget;
  prompts: number[][];
  params: SampleParams;
  exclusive: boolean;
  resolve: (r: BatchedSample) => void;
  reject: (err: unknown) => void;
}

interface ScoreJob {
  kind: 'score';
  target: PolicyTarget;
  batch: ScoreRequest[];
  resolve: (r: Float32Array[]) => void;
  reject: (err: unknown) => void;
}

export interface BatcherOptions {
  /** How long the first request of a batch waits for others, in milliseconds. */
  windowMs: number;
  /** Token ids → text, for stop strings (null: requests with stop strings are refused before they get here). */
  decode: Decode | null;
  /** The first seed the server picks for requests that give none (then +1 per call). */
  firstSeed: number;
}

const targetKey = (t: PolicyTarget): string => (t.kind === 'base' ? 'base' : `adapter:${t.name}`);

export class SampleBatcher {
  readonly stats: BatcherStats = { requests: 0, engineCalls: 0, scoreCalls: 0 };
  private pending: (SampleJob | ScoreJob)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private nextSeed: number;
  private exclusiveCount = 0;

  constructor(private readonly engine: SamplingEngine, private readonly options: BatcherOptions) {
    this.nextSeed = options.firstSeed;
  }

  /**
   * Samples `prompts` with `params` (stop strings and max tokens included). `exclusive`: the tokens must
   * be those of engine.sample(target, prompts, params) for params.seed (a seeded request); otherwise
   * the seed is the server's to choose when the temperature is above 0.
   */
  sample(target: PolicyTarget, prompts: number[][], params: SampleParams, exclusive: boolean): Promise<BatchedSample> {
    this.stats.requests++;
    return new Promise((resolve, reject) => {
      this.pending.push({ kind: 'sample', target, prompts, params, exclusive, resolve, reject });
      this.schedule();
    });
  }

  score(target: PolicyTarget, batch: ScoreRequest[]): Promise<Float32Array[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ kind: 'score', target, batch, resolve, reject });
      this.schedule();
    });
  }

  /** The engine as the workflow runtime sees it (--team), every call going through this batcher. */
  asEngine(exclusive: boolean): SamplingEngine {
    return {
      info: this.engine.info,
      sample: async (target, prompts, params) => (await this.sample(target, prompts, params, exclusive)).results,
      score: (target, batch) => this.score(target, batch),
      dispose: async () => {},
    };
  }

  private schedule(): void {
    if (this.running || this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.options.windowMs);
  }

  private async flush(): Promise<void> {
    this.timer = null;
    if (this.running) return;
    this.running = true;
    try {
      while (this.pending.length > 0) {
        const jobs = this.pending;
        this.pending = [];
        const groups = new Map<string, (SampleJob | ScoreJob)[]>();
        for (const job of jobs) {
          const key = this.groupKey(job);
          const group = groups.get(key);
          if (group) group.push(job);
          else groups.set(key, [job]);
        }
        for (const group of groups.values()) {
          if (group[0]!.kind === 'score') await this.runScore(group as ScoreJob[]);
          else await this.runSample(group as SampleJob[]);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private groupKey(job: SampleJob | ScoreJob): string {
    if (job.kind === 'score') return JSON.stringify(['score', targetKey(job.target)]);
    const p = job.params;
    const stops = [...new Set(p.stopTokenIds)].sort((a, b) => a - b);
    if (p.temperature === 0) return JSON.stringify(['greedy', targetKey(job.target), stops]);
    const seed = job.exclusive ? `own-${this.exclusiveCount++}` : 'server';
    return JSON.stringify(['sampled', targetKey(job.target), p.temperature, p.topP, p.topK, stops, seed]);
  }

  private async runSample(jobs: SampleJob[]): Promise<void> {
    const first = jobs[0]!;
    const prompts = jobs.flatMap((j) => j.prompts);
    // Exclusive: the request's own seed. Greedy: no generator is read, any seed gives the same tokens.
    const seed = first.exclusive || first.params.temperature === 0 ? first.params.seed : this.nextSeed++;
    const params: SampleParams = { ...first.params, seed, stopStrings: [], maxNewTokens: Math.max(...jobs.map((j) => j.params.maxNewTokens)) };
    const call = ++this.stats.engineCalls;
    let results: SampleResult[];
    try {
      results = await this.engine.sample(first.target, prompts, params);
      if (results.length !== prompts.length) throw new Error(`engine.sample returned ${results.length} results for ${prompts.length} prompts`);
    } catch (err) {
      for (const j of jobs) j.reject(err);
      return;
    }
    const batch: BatchInfo = { call, requests: jobs.length, prompts: prompts.length };
    let at = 0;
    for (const job of jobs) {
      const own = results.slice(at, at + job.prompts.length);
      at += job.prompts.length;
      try {
        job.resolve({ results: own.map((r) => this.cut(r, job.params)), batch });
      } catch (err) {
        job.reject(err);
      }
    }
  }

  /** The sample as the engine would have returned it under the request's own max tokens and stop strings. */
  private cut(r: SampleResult, params: SampleParams): SampleResult {
    const out: SampleResult = { tokens: r.tokens.slice(0, params.maxNewTokens), logprobs: r.logprobs.slice(0, params.maxNewTokens), stopReason: r.stopReason };
    if (r.tokens.length > params.maxNewTokens) out.stopReason = 'max_tokens';
    if (params.stopStrings.length > 0) {
      if (!this.options.decode) throw new Error('stop strings reached the batcher without a decoder');
      cutAtStopString(out, params.stopStrings, this.options.decode);
    }
    return out;
  }

  private async runScore(jobs: ScoreJob[]): Promise<void> {
    this.stats.scoreCalls++;
    try {
      const all = await this.engine.score(jobs[0]!.target, jobs.flatMap((j) => j.batch));
      let at = 0;
      for (const job of jobs) {
        job.resolve(all.slice(at, at + job.batch.length));
        at += job.batch.length;
      }
    } catch (err) {
      for (const j of jobs) j.reject(err);
    }
  }
}
