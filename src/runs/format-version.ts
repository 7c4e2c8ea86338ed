// Every file format a run or an experiment writes carries a format name and a version number, and
// every reader checks them: a file from a newer marft (a version above the one this code writes) is
// refused in one line rather than read with a guess at what its new fields mean; a file from an older
// marft (a lower version, or no version at all: written before versions existed) is read, migrated
// by the reader where its shape changed. The versions of each file are listed in docs/reliability.md.
import { RunError } from './run-errors.ts';

/** A file written by a newer marft than this one. */
export class FormatVersionError extends RunError {
  override name = 'FormatVersionError';
}

/** The versions this code writes, one per file format. */
export const FORMAT_VERSIONS = {
  /** checkpoints/step-N/manifest.json and base/manifest.json (src/runs/manifest.ts). */
  'marft-manifest': 1,
  /** checkpoints/step-N/state.json (src/runs/checkpoint.ts). */
  'marft-checkpoint-state': 1,
  /** checkpoints/latest.json (src/runs/checkpoint.ts). */
  'marft-run-pointer': 1,
  /** RUN/marft-run.json, the mark of a run folder (src/runs/run-folder.ts). */
  'marft-run': 1,
  /** Each line of an experiment's results.jsonl (src/experiments/results.ts). */
  'marft-experiment-result': 1,
  /** An experiment's table.json (src/experiments/runner.ts). */
  'marft-experiment-table': 1,
  /** built-by.json of a saved base: the code that built it (src/runs/base-folder.ts). */
  'marft-built-by': 1,
} as const;

export type FormatName = keyof typeof FORMAT_VERSIONS;

/** The fields a versioned file carries. */
export const formatFields = (format: FormatName): { format: FormatName; version: number } => ({ format, version: FORMAT_VERSIONS[format] });

/**
 * The version of `parsed` (the JSON of `file`, in format `format`): 1 when it carries none (files
 * written before versions existed are version 1). Throws FormatVersionError for a newer version;
 * null when the version field is there but not a positive integer (the caller's "damaged").
 */
export function formatVersion(file: string, format: FormatName, parsed: unknown): number | null {
  const version = (parsed as { version?: unknown } | null)?.version;
  if (version === undefined) return 1;
  if (!Number.isInteger(version) || (version as number) < 1) return null;
  const supported = FORMAT_VERSIONS[format];
  if ((version as number) > supported) {
    throw new FormatVersionError(`${file} was written by a newer marft (${format} version ${version as number}; this marft reads up to version ${supported}); upgrade marft to use it. Nothing was changed`);
  }
  return version as number;
}
