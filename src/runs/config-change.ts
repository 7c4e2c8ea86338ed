// A resumed run checks its configuration against the snapshot stored in the checkpoint it resumes
// from. Without an explicit request nothing may differ (an edited config.json would otherwise
// change the learning rate, seed or batch size mid-run, silently). With `acceptConfigChange` the
// difference is applied and recorded in RUN/config-changes.jsonl ({ step, key, old, new } per key),
// and RUN/config.json is rewritten, except for keys that define what the checkpoint is: those
// cannot change mid-run at all.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MarftConfig } from '../config/schema.ts';
import { writeFileAtomic } from './atomic-write.ts';
import type { Notice } from '../core/notice.ts';
import { ConfigChangeError } from './run-errors.ts';
import { writing } from './write-errors.ts';

export interface ConfigDifference {
  key: string;
  old: unknown;
  new: unknown;
}

/** Keys (and key prefixes, ending in '.') that cannot change mid-run, with the reason. */
const FIXED: [string, string][] = [
  ['algorithm', 'the checkpoint holds the trainables of its algorithm'],
  ['seed', "every step's sampling seed derives from it; another seed is another run"],
  ['model.engine', 'the checkpoint was written by that engine'],
  ['model.path', "the adapters were trained on that base model"],
  ['model.precision', 'the optimiser state was computed in that precision'],
  ['task.', 'the task defines the problems, agents and vocabulary the checkpoint was trained on'],
  ['policy.', "the policy adapters' shapes and sharing are fixed by the checkpoint"],
  ['critic.kind', "the critic's shape is fixed by the checkpoint"],
  ['critic.mlpHidden', "the critic's shape is fixed by the checkpoint"],
  ['critic.loraRank', "the critic's shape is fixed by the checkpoint"],
  ['critic.loraAlpha', "the critic adapter's scale is fixed by the checkpoint"],
];

/** Why `key` cannot change mid-run, or null when it may (with acceptConfigChange). */
export function fixedReason(key: string): string | null {
  for (const [k, why] of FIXED) if (k.endsWith('.') ? key.startsWith(k) : key === k || key.startsWith(`${k}.`)) return why;
  return null;
}

function flatten(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && prefix) out.set(prefix, value);
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, value);
  }
}

/** Every leaf key whose value differs (arrays compared whole), in key order. */
export function configDifferences(old: unknown, now: unknown): ConfigDifference[] {
  const a = new Map<string, unknown>();
  const b = new Map<string, unknown>();
  // Through JSON, as stored: undefined fields vanish on both sides alike.
  flatten(JSON.parse(JSON.stringify(old)), '', a);
  flatten(JSON.parse(JSON.stringify(now)), '', b);
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  return keys.filter((k) => JSON.stringify(a.get(k)) !== JSON.stringify(b.get(k))).map((k) => ({ key: k, old: a.get(k), new: b.get(k) }));
}

/** A value as the user would write it: 1e10 rather than 10000000000. */
const brief = (v: unknown): string =>
  v === undefined ? '(absent)' : typeof v === 'number' && v !== 0 && (Math.abs(v) >= 1e5 || Math.abs(v) < 1e-3) ? v.toExponential().replace('e+', 'e') : JSON.stringify(v);
const listed = (ds: ConfigDifference[]): string => ds.map((d) => `${d.key} ${brief(d.old)} → ${brief(d.new)}`).join(', ');

export interface ConfigCheck {
  runDir: string;
  /** The step the run resumes from. */
  step: number;
  accept: boolean;
  notice: Notice;
}

/**
 * Refuses a configuration that differs from the checkpoint's (naming the keys), or, when `accept`,
 * records the change and lets it through. Returns the differences applied.
 */
export async function checkConfigChange(snapshot: MarftConfig, config: MarftConfig, check: ConfigCheck): Promise<ConfigDifference[]> {
  // log.* says where the run reports, not what it computes (and an older checkpoint has none).
  const diffs = configDifferences(snapshot, config).filter((d) => !d.key.startsWith('log.'));
  if (diffs.length === 0) return [];
  const fixed = diffs.filter((d) => fixedReason(d.key) !== null);
  if (fixed.length > 0) {
    const [first] = fixed;
    throw new ConfigChangeError(`the configuration differs from the run's checkpoint at step ${check.step} in ${listed(fixed)}, which cannot change mid-run (${first!.key}: ${fixedReason(first!.key)}); start a new run for it`);
  }
  if (!check.accept) {
    throw new ConfigChangeError(`the configuration differs from the run's checkpoint at step ${check.step}: ${listed(diffs)}; to apply this change mid-run, resume with --accept-config-change (it is recorded in config-changes.jsonl)`);
  }
  const lines = diffs.map((d) => `${JSON.stringify({ step: check.step, key: d.key, old: d.old ?? null, new: d.new ?? null })}\n`).join('');
  const changes = join(check.runDir, 'config-changes.jsonl');
  await writing(changes, () => appendFile(changes, lines));
  await writeFileAtomic(join(check.runDir, 'config.json'), JSON.stringify(config, null, 2));
  check.notice(`configuration changed at step ${check.step}: ${listed(diffs)} (recorded in config-changes.jsonl)`);
  return diffs;
}
