// "Did you mean …?" for a mistyped name (a command, an option, a configuration key or value): the
// known name nearest to it by edit distance, when it is near enough to be a slip of the keyboard.

/**
 * Optimal-string-alignment distance: insertions, deletions, substitutions and transpositions of two
 * neighbouring characters ('trian' → 'train') each cost 1.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[(i - 2) * cols + j - 2]! + 1);
      d[i * cols + j] = best;
    }
  }
  return d[rows * cols - 1]!;
}

/**
 * The candidate nearest to `word` (case ignored), or null when none is within a third of the word's
 * length (at least 1) — and never one that shares no character position with it (a 1-letter word is
 * not a typo of another 1-letter word). Ties go to the earlier candidate.
 */
export function closest(word: string, candidates: readonly string[]): string | null {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(w.length / 3));
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const distance = editDistance(w, c.toLowerCase());
    if (distance < bestDistance && distance <= limit && distance < Math.max(w.length, c.length)) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

/** `did you mean X?` for the nearest candidate (shown through `render`), or null. */
export function didYouMean(word: string, candidates: readonly string[], render: (name: string) => string = (s) => s): string | null {
  const near = closest(word, candidates);
  return near === null ? null : `did you mean ${render(near)}?`;
}
