// Errors of a run folder that are the user's to fix (a second writer, a diverged step, a changed
// configuration, a damaged run): each is one line naming what happened and what to do. They extend
// ConfigError, which the CLI already reports as one line with exit code 2 (src/cli/commands/train.ts).
import { ConfigError } from '../config/schema-dsl.ts';

export class RunError extends ConfigError {
  override name = 'RunError';
}

/** Another live process holds the run folder's lock (src/runs/run-lock.ts). */
export class RunLockedError extends RunError {
  override name = 'RunLockedError';
}

/** A step produced a number that is not finite (src/runs/divergence.ts); nothing of that step was checkpointed. */
export class DivergenceError extends RunError {
  override name = 'DivergenceError';
  constructor(readonly step: number, message: string) {
    super(message);
  }
}

/** The configuration differs from the one the run's checkpoint was trained with (src/runs/config-change.ts). */
export class ConfigChangeError extends RunError {
  override name = 'ConfigChangeError';
}

/** Checkpoints exist but none is intact, or a named checkpoint is damaged (src/runs/checkpoint.ts). */
export class DamagedRunError extends RunError {
  override name = 'DamagedRunError';
}
