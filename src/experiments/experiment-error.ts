// A mistake in an experiment file, its --out folder or its runs: reported in one line by the CLI
// (a ConfigError, like src/runs/run-errors.ts's), without src/experiments importing the CLI above it.
import { ConfigError } from '../config/schema-dsl.ts';

export class ExperimentError extends ConfigError {
  override name = 'ExperimentError';
}
