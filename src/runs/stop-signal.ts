// Stopping a run cleanly on request. The first SIGINT (Ctrl-C), SIGTERM (a scheduler, kill) or SIGHUP
// (a closed terminal), or the parent process going away, asks the trainer to stop: the step in flight
// is finished (its update is already being applied; abandoning it half-way would leave the live
// parameters between two states), checked finite and checkpointed, the lock is released, and the
// command prints one line saying where to resume from and exits with the signal's conventional
// status (128 + its number: 130, 143, 129). A second request stops at once: the temporaries being
// written are removed, the lock released, one line printed, and the step in flight is lost (the run
// resumes from its last checkpoint). A terminal's Ctrl-C reaches every process of its group, and a
// wrapper may forward it as well: the same signal again within DOUBLE_DELIVERY_MS of the first is
// that request delivered twice, not a second one (another signal is a second request at once).
//
// The parent watch: a trainer started through a wrapper (npx runs `sh -c marft …`) must not outlive
// whoever started it, or it goes on training, detached, holding the run folder after the wrapper was
// stopped. When the parent exits, the process is re-parented (its ppid changes): that is taken as a
// SIGHUP. `marft train --outlive-parent` turns the watch off and ignores SIGHUP, for runs meant to
// go on alone (nohup-style).
import { constants } from 'node:os';
import { removeTemporariesSync } from './temporaries.ts';

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

export const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The first signal again this soon is the same request delivered twice (terminal group + a forwarding wrapper). */
export const DOUBLE_DELIVERY_MS = 1000;

/** The conventional exit status of a process ended by `signal`: 128 + its number. */
export const signalExitCode = (signal: StopSignal): number => 128 + constants.signals[signal];

/** A run that stopped on request (train({ stop }) aborted) at a step boundary, with every completed step checkpointed. */
export class RunStopped extends Error {
  override name = 'RunStopped';
  /** `reason`: the abort's reason (a StopRequest from watchStop); `step`: completed steps; `checkpoint`: the folder that holds them (null: none yet). */
  constructor(readonly reason: unknown, readonly step: number, readonly checkpoint: string | null) {
    super(`stopped on request after step ${step}`);
  }
}

export interface StopRequest {
  signal: StopSignal;
  /** The parent process went away (taken as SIGHUP). */
  parentGone: boolean;
}

export interface StopWatch {
  /** Aborted at the first request; its reason is the StopRequest. */
  readonly signal: AbortSignal;
  /** The first request, or null. */
  request(): StopRequest | null;
  /** Removes the handlers and the parent watch. */
  dispose(): void;
}

export interface StopWatchOptions {
  /**
   * A second request: the command's last words (release its lock, print its line), synchronously.
   * The temporaries being written are removed and the process exits with the signal's status after it.
   */
  atOnce: (signal: StopSignal) => void;
  /** Stop as on SIGHUP when the parent process goes away (default true). */
  watchParent?: boolean;
  /** Leave SIGHUP alone (default false). */
  ignoreHangup?: boolean;
  /** Told of the first request (e.g. a line on a terminal); default nothing. */
  onFirst?: (request: StopRequest) => void;
  /** How often the parent is checked (default 500 ms). */
  parentPollMs?: number;
}

let pipesTolerated = false;

/**
 * A parent that went away may take the reading end of stdout and stderr with it: the stop's line
 * then has nowhere to go, which must not turn a clean stop into a crash. Installed once, for the rest
 * of the process (the failed write is reported after the line's caller has moved on).
 */
function tolerateBrokenPipes(): void {
  if (pipesTolerated) return;
  pipesTolerated = true;
  const brokenPipe = (err: NodeJS.ErrnoException): void => {
    if (err.code !== 'EPIPE') throw err;
  };
  process.stdout.on('error', brokenPipe);
  process.stderr.on('error', brokenPipe);
}

/** Installs the handlers of a clean stop; the caller passes `signal` to train() and disposes the watch at the end. */
export function watchStop(options: StopWatchOptions): StopWatch {
  const controller = new AbortController();
  let first: StopRequest | null = null;
  let firstAt = 0;
  const requested = (req: StopRequest): void => {
    if (first === null) {
      first = req;
      firstAt = Date.now();
      controller.abort(req);
      options.onFirst?.(req);
      return;
    }
    const echo = req.signal === first.signal && Date.now() - firstAt < DOUBLE_DELIVERY_MS;
    if (req.parentGone || echo) return;
    try {
      options.atOnce(req.signal);
    } finally {
      removeTemporariesSync();
      process.exit(signalExitCode(req.signal));
    }
  };
  const handlers = new Map<StopSignal, () => void>();
  for (const signal of STOP_SIGNALS) {
    if (signal === 'SIGHUP' && options.ignoreHangup) {
      handlers.set(signal, () => undefined);
    } else {
      handlers.set(signal, () => requested({ signal, parentGone: false }));
    }
    process.on(signal, handlers.get(signal)!);
  }
  tolerateBrokenPipes();
  let timer: NodeJS.Timeout | null = null;
  const parent = process.ppid;
  // A parent of 1 is init already (started by a service manager, or the parent died before this
  // line): there is nothing to watch.
  if (options.watchParent !== false && parent > 1) {
    timer = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(timer!);
      timer = null;
      requested({ signal: 'SIGHUP', parentGone: true });
    }, options.parentPollMs ?? 500);
    timer.unref();
  }
  return {
    signal: controller.signal,
    request: () => first,
    dispose: () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      if (timer) clearInterval(timer);
    },
  };
}
