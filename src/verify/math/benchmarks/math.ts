// MATH (Hendrycks et al. 2021) as its authors score it: hendrycks/math, modeling/eval_math_gpt.py
// with modeling/equivalent.py and modeling/dataset/util.py.
//
// Extraction: the model's output is cut to its last "\boxed{...}" (last_boxed_only_string, then
// remove_boxed); an output without one scores 0, whatever it says. The reference is the same
// extraction applied to the worked solution (a bare reference answer is used as it is).
// Equivalence: is_equiv, i.e. both strings through strip_string (hendrycks-normalize.ts) and then
// compared as strings. There is no arithmetic: "\frac{2}{4}" is not "\frac{1}{2}", "x+1" is not
// "1+x", "10, 4, -2" is not "4, 10, -2" (order matters), and "0.5" equals "\frac{1}{2}" only
// because strip_string spells 0.5 that way.
import type { BenchmarkScorer } from './types.ts';
import { hendrycksIsEquiv, lastBoxedContent } from './hendrycks-normalize.ts';

export const mathScorer: BenchmarkScorer = {
  name: 'math',
  describe: 'hendrycks/math is_equiv: last \\boxed{} only, strip_string, equal strings',
  reference: (gold) => (gold.includes('\\boxed') || gold.includes('\\fbox') ? lastBoxedContent(gold) : gold),
  extract: (response) => lastBoxedContent(response),
  equal: (reference, answer) => hendrycksIsEquiv(answer, reference),
};
