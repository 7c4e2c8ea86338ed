// Progress on stderr. On a terminal: one bar redrawn in place, with the step, the main metrics, the
// elapsed time, the time left (the steps', the first held-out evaluation not counted) and the sampling
// speed. Elsewhere (nohup, a batch scheduler, docker logs, a pipe), where a redrawn bar would show
// nothing until the run ends: a plain line every `log.every` steps or once `log.everySeconds` have
// passed, and always at the first and last step.
import type { StepMetrics } from '../metrics-log.ts';
import type { EvaluationPoint, Tracker } from './tracker.ts';

export type ConsoleMode = 'bar' | 'lines' | 'off';

export interface ConsoleOptions {
  mode: ConsoleMode;
  totalSteps: number;
  startStep: number;
  /** Lines mode: a line every N steps (0 = by time only). */
  every: number;
  /** Lines mode: a line once this many seconds have passed since the last (0 = by steps only). */
  everySeconds: number;
  /** Default: stderr. */
  write?: (text: string) => void;
  /** Milliseconds, monotonic; default performance.now (tests pass a clock of their own). */
  now?: () => number;
}

/** 7s, 4m05s, 2h03m. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

const fixed = (v: unknown, digits: number): string => (typeof v === 'number' ? v.toFixed(digits) : '-');

/** The step's main metrics: score, and with a critic the value loss and explained variance per agent position. */
export function stepNote(m: StepMetrics): string {
  const parts = [`score ${fixed(m.score_mean, 3)}`];
  if (typeof m.value_loss === 'number') {
    const ev = Object.keys(m).filter((k) => k.startsWith('explained_variance/pos')).map((k) => fixed(m[k], 2));
    parts.push(`vloss ${m.value_loss.toFixed(4)}`);
    if (ev.length > 0) parts.push(`ev ${ev.join('/')}`);
  }
  if (typeof m.eval_score === 'number') parts.push(`eval ${m.eval_score.toFixed(3)}`);
  return parts.join(' ');
}

export class ConsoleTracker implements Tracker {
  private readonly write: (text: string) => void;
  private readonly now: () => number;
  private readonly started: number;
  /** Seconds this session spent in its steps, and when the last step or evaluation ended. */
  private stepSeconds = 0;
  private mark: number;
  private lastLine = -Infinity;
  private barShown = false;

  constructor(private readonly options: ConsoleOptions) {
    this.write = options.write ?? ((text) => void process.stderr.write(text));
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.mark = this.started;
  }

  /**
   * Elapsed time, time left and the step's sampling speed. Time left is the steps still to run at this
   * session's mean step time, without the held-out evaluation before the first step: on a real model
   * it can take as long as several steps, and counted in the rate it inflated the estimate (a SmolLM2
   * run whose first evaluation took 15 min and whose steps took 2.5 said 3h28m left after its first
   * step, with 35 min to go). A train.evalEvery evaluation runs inside its step and recurs, so it
   * stays in the rate; the evaluation after the last step is not in the estimate.
   */
  private timing(done: number, m: StepMetrics): string {
    const elapsed = (this.now() - this.started) / 1000;
    const ranHere = done - this.options.startStep;
    const left = ranHere > 0 ? (this.stepSeconds / ranHere) * (this.options.totalSteps - done) : NaN;
    const parts = [`${duration(elapsed)} elapsed`];
    if (Number.isFinite(left)) parts.push(`${duration(left)} left`);
    if (typeof m.tokens_per_s === 'number' && Number.isFinite(m.tokens_per_s)) parts.push(`${Math.round(m.tokens_per_s)} tok/s`);
    return parts.join(', ');
  }

  async step(m: StepMetrics): Promise<void> {
    const { mode, totalSteps, every, everySeconds } = this.options;
    if (mode === 'off') return;
    const done = Number(m.step) + 1;
    const stepEnd = this.now();
    this.stepSeconds += (stepEnd - this.mark) / 1000;
    this.mark = stepEnd;
    if (mode === 'bar') {
      const width = 24;
      const filled = Math.round((done / totalSteps) * width);
      this.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${totalSteps} ${stepNote(m)} | ${this.timing(done, m)}\x1b[K`);
      this.barShown = true;
      return;
    }
    const now = this.now();
    const due = done === this.options.startStep + 1 || done === totalSteps || (every > 0 && done % every === 0) || (everySeconds > 0 && now - this.lastLine >= everySeconds * 1000);
    if (!due) return;
    this.lastLine = now;
    this.write(`marft train: step ${done}/${totalSteps}  ${stepNote(m)}  ${this.timing(done, m)}\n`);
  }

  async evaluation(e: EvaluationPoint): Promise<void> {
    this.mark = this.now(); // the next step's time starts after the evaluation
    if (this.options.mode === 'off') return;
    const line = `marft train: held-out score ${e.when} training (step ${e.step}): ${e.score.toFixed(4)} (${e.perSeed.length} seed${e.perSeed.length === 1 ? '' : 's'} × ${e.problems} problems)`;
    // Printed under the bar, which is redrawn on the next line.
    this.write(`${this.barShown ? '\r\x1b[K' : ''}${line}\n`);
    this.barShown = false;
  }

  async close(): Promise<void> {
    if (this.barShown) this.write('\n');
    this.barShown = false;
  }
}
