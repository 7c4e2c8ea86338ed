// mathAnswersEqual with a time limit per comparison. JavaScript cannot interrupt a synchronous
// computation, so the comparisons run on a worker thread that is terminated when one runs over its
// limit; the next comparison starts a fresh thread. The thread is kept between comparisons (starting
// one loads the computer-algebra engine, far longer than a comparison), and its start-up is not
// counted against the limit.
import { Worker } from 'node:worker_threads';
import type { BenchmarkProblemInfo } from './benchmarks/types.ts';

/** Which scorer judges (benchmarks/index.ts): a benchmark's, with the problem's facts; none: mathAnswersEqual. */
export interface JudgeScoring {
  benchmark?: string;
  problem?: BenchmarkProblemInfo;
}

/** A verdict, or null with why there is none ('timeout' when the comparison ran over its limit). */
export type TimedVerdict = { equal: boolean } | { equal: null; error: string };

interface Running {
  worker: Worker;
  ready: Promise<void>;
}

export class TimedMathJudge {
  private running: Running | null = null;

  constructor(private readonly limitMs: number) {
    if (!(limitMs > 0)) throw new Error(`the time limit must be positive (got ${limitMs} ms)`);
  }

  private start(): Running {
    // No inherited node flags: the entry registers what it needs (as the engine's pool does).
    const worker = new Worker(new URL('./judge-worker-entry.mjs', import.meta.url), { execArgv: [] });
    const ready = new Promise<void>((resolve, reject) => {
      const done = (): void => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (m: unknown): void => {
        if (m !== 'ready') return;
        done();
        resolve();
      };
      const onError = (e: Error): void => {
        done();
        reject(new Error(`the maths judging thread could not start: ${e.message}`));
      };
      const onExit = (code: number): void => {
        done();
        reject(new Error(`the maths judging thread exited while starting (exit code ${code})`));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
    // A start that fails is reported by judge(); this keeps it from also being an unhandled rejection.
    ready.catch(() => undefined);
    return { worker, ready };
  }

  private discard(r: Running): void {
    if (this.running === r) this.running = null;
    void r.worker.terminate();
  }

  /**
   * Compares two answers (or texts holding them) within the time limit: as mathAnswersEqual does,
   * or as scoreAnswer does under `scoring.benchmark` (an unknown name is the caller's to check).
   */
  async judge(gold: string, pred: string, scoring: JudgeScoring = {}): Promise<TimedVerdict> {
    const r = (this.running ??= this.start());
    try {
      await r.ready;
    } catch (err) {
      this.discard(r);
      throw err;
    }
    return new Promise<TimedVerdict>((resolve) => {
      const finish = (verdict: TimedVerdict): void => {
        clearTimeout(timer);
        r.worker.off('message', onMessage);
        r.worker.off('error', onError);
        r.worker.off('exit', onExit);
        resolve(verdict);
      };
      const onMessage = (m: { equal: boolean }): void => finish({ equal: m.equal });
      const onError = (e: Error): void => {
        this.discard(r);
        finish({ equal: null, error: `judging failed: ${e.message}` });
      };
      const onExit = (code: number): void => {
        this.discard(r);
        finish({ equal: null, error: `the judging thread exited (exit code ${code})` });
      };
      const timer = setTimeout(() => {
        this.discard(r);
        finish({ equal: null, error: 'timeout' });
      }, this.limitMs);
      r.worker.on('message', onMessage);
      r.worker.on('error', onError);
      r.worker.on('exit', onExit);
      r.worker.postMessage({ gold, pred, ...scoring });
    });
  }

  /** Stops the judging thread (a later judge() starts another). */
  async close(): Promise<void> {
    const r = this.running;
    this.running = null;
    if (r) await r.worker.terminate();
  }
}
