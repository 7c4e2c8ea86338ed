// DeepScaleR's reward, the grader its RL training used (Luo et al. 2025, agentica-project/deepscaler,
// now rllm-org/rllm): rllm/rewards/math_reward.py `RewardMathFn` with
// rllm/rewards/math_utils/utils.py. Same family as MATH-500: its equivalence is PRM800K's grader
// (prm800k.ts), `grade_answer_mathd(answer, truth) or grade_answer_sympy(answer, truth)`.
//
// What differs is where the answer is read:
//   - a response with "</think>" is graded on the text after it (the part up to a second
//     "</think>", as split("</think>")[1]); one without is graded whole (the released default,
//     apply_format_reward = False; the first DeepScaleR release instead scored a response without
//     <think>...</think> 0);
//   - only a \boxed{...} counts: the last one, by MATH's last_boxed_only_string and remove_boxed
//     (an \fbox or "\boxed 5" is no answer). A right answer that is not boxed scores 0;
//   - a reference holding "\boxed" is reduced to its box; an empty or blank reference (after that)
//     can match nothing.
import { lastBoxedContent } from './hendrycks-normalize.ts';
import { prm800kGradeAnswer } from './prm800k.ts';
import type { BenchmarkScorer } from './types.ts';

const THINK_END = '</think>';

/** DeepScaleR's extract_answer: the last box's content when the passage holds "\boxed", else none. */
function extractBoxedOnly(passage: string): string | null {
  return passage.includes('\\boxed') ? lastBoxedContent(passage) : null;
}

export const deepscalerScorer: BenchmarkScorer = {
  name: 'deepscaler',
  describe: 'agentica-project/deepscaler reward: after </think>, last \\boxed{} only, PRM800K',
  reference: (gold) => {
    const truth = gold.includes('\\boxed') ? extractBoxedOnly(gold) : gold;
    return truth === null || truth.trim() === '' ? null : truth;
  },
  extract: (response) => {
    const text = response.trim();
    if (text === '') return null;
    const solution = text.includes(THINK_END) ? text.split(THINK_END)[1]! : text;
    return extractBoxedOnly(solution);
  },
  equal: (reference, answer) => {
    try {
      return prm800kGradeAnswer(answer, reference);
    } catch {
      return false;
    }
  },
};
