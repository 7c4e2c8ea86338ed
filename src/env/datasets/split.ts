// Deterministic, seeded splits and samples. A problem's side of a split depends only on (seed, id),
// never on file order or on the other problems, so a split is stable across runs, machines and
// appended data (a problem added later never moves an existing one to the other side).
import { createHash } from 'node:crypto';

/** A uniform number in [0, 1) from (seed, key): the first 48 bits of sha256("seed:key"). */
export function hashUnit(seed: number | string, key: string): number {
  const h = createHash('sha256').update(`${seed}:${key}`).digest();
  return (h.readUIntBE(0, 6)) / 2 ** 48;
}

export interface Split<P> {
  train: P[];
  test: P[];
}

/** Puts each problem in `test` when hashUnit(seed, id) < testFraction, else in `train`; order is kept. */
export function splitProblems<P extends { id: string }>(problems: P[], opts: { seed: number; testFraction: number }): Split<P> {
  if (!(opts.testFraction >= 0 && opts.testFraction <= 1)) throw new RangeError(`testFraction must be in [0, 1], got ${opts.testFraction}`);
  const train: P[] = [];
  const test: P[] = [];
  for (const p of problems) (hashUnit(opts.seed, p.id) < opts.testFraction ? test : train).push(p);
  return { train, test };
}

/** The problems ordered by hashUnit(seed, id): a seeded shuffle that does not depend on input order. */
export function seededShuffle<P extends { id: string }>(problems: P[], seed: number): P[] {
  return problems
    .map((p) => ({ p, k: hashUnit(seed, p.id) }))
    .sort((a, b) => a.k - b.k || (a.p.id < b.p.id ? -1 : a.p.id > b.p.id ? 1 : 0))
    .map((x) => x.p);
}

/** The first n problems of the seeded shuffle. */
export function seededSample<P extends { id: string }>(problems: P[], n: number, seed: number): P[] {
  return seededShuffle(problems, seed).slice(0, n);
}
