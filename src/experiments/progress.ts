// The experiment's progress line on stderr: cells done of the total (a cell is one row × training
// seed × column evaluation, one line of results.jsonl), runs trained, the time spent in this call,
// and the time left estimated from the work this call has finished: the remaining training steps at
// the measured seconds per training step, plus the remaining evaluations at the measured seconds per
// evaluation. Until a kind of work has been measured once, the estimate says what it waits for.

export interface ProgressTotals {
  /** Evaluations planned (rows × seeds × columns, for the rows run). */
  cells: number;
  /** Of those, already in results.jsonl. */
  cellsDone: number;
  /** Runs to train (base rows excluded). */
  runs: number;
  /** Of those, finished before this call. */
  runsDone: number;
  /** Training steps still to run over every unfinished run. */
  stepsLeft: number;
}

export interface Measured {
  trainSeconds: number;
  trainSteps: number;
  evalSeconds: number;
  evals: number;
}

/** Seconds left, or why there is no estimate yet. */
export function estimateLeft(stepsLeft: number, cellsLeft: number, m: Measured): number | string {
  const waiting: string[] = [];
  if (stepsLeft > 0 && m.trainSteps === 0) waiting.push('a run has trained');
  if (cellsLeft > 0 && m.evals === 0) waiting.push('an evaluation has finished');
  if (waiting.length > 0) return `unknown until ${waiting.join(' and ')}`;
  return (stepsLeft > 0 ? stepsLeft * (m.trainSeconds / m.trainSteps) : 0) + (cellsLeft > 0 ? cellsLeft * (m.evalSeconds / m.evals) : 0);
}

/** 12.3 s, 4 min 05 s, 2 h 03 min. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

export class ExperimentProgress {
  private readonly start: number;
  private readonly measured: Measured = { trainSeconds: 0, trainSteps: 0, evalSeconds: 0, evals: 0 };
  private cellsDone: number;
  private runsDone: number;
  private stepsLeft: number;

  constructor(private readonly totals: ProgressTotals, private readonly now: () => number = Date.now) {
    this.start = now();
    this.cellsDone = totals.cellsDone;
    this.runsDone = totals.runsDone;
    this.stepsLeft = totals.stepsLeft;
  }

  /** What is to do, before anything runs. */
  plan(): string {
    const t = this.totals;
    return `experiment: ${t.cells} cells (row × seed × column): ${t.cellsDone} done, ${t.cells - t.cellsDone} to evaluate; ${t.runs - t.runsDone} of ${t.runs} runs to train or resume (${t.stepsLeft} steps)`;
  }

  /** A run finished training `steps` steps in `seconds`. */
  trained(steps: number, seconds: number): void {
    this.runsDone++;
    this.stepsLeft = Math.max(0, this.stepsLeft - steps);
    this.measured.trainSteps += steps;
    this.measured.trainSeconds += seconds;
  }

  /** An evaluation finished in `seconds`. */
  evaluated(seconds: number): void {
    this.cellsDone++;
    this.measured.evals++;
    this.measured.evalSeconds += seconds;
  }

  line(): string {
    const t = this.totals;
    const left = estimateLeft(this.stepsLeft, t.cells - this.cellsDone, this.measured);
    const leftText = typeof left === 'number' ? `about ${formatDuration(left)} left` : `time left ${left}`;
    return `experiment: progress: ${this.cellsDone} of ${t.cells} cells done, ${this.runsDone} of ${t.runs} runs trained; ${formatDuration((this.now() - this.start) / 1000)} elapsed, ${leftText}`;
  }
}
