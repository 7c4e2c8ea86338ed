// Pretraining sequences: the noisy teacher's transcripts rendered as the two agents' prompts
// followed by their replies. Only the reply tokens (and the closing <|end|>) are scored, as in
// supervised fine-tuning on chat data.
import type { ScoreRequest } from '../../engine/types.ts';
import type { CharTokenizer } from '../../tokenizer/index.ts';
import { type DuoRoles, NAMED_ROLES, plannerPrompt, solverPrompt } from './duo-prompts.ts';
import type { Rng } from '../../core/rng.ts';
import type { Problem } from './task.ts';
import { type TeacherNoise, teacherTranscript } from './teacher.ts';

/** Two sequences per problem (the Planner's and the Solver's turn): 2·problems.length requests. */
export function transcriptBatch(tokenizer: CharTokenizer, problems: Problem[], rng: Rng, noise?: TeacherNoise, roles: DuoRoles = NAMED_ROLES): ScoreRequest[] {
  const end = tokenizer.specialId('<|end|>');
  const batch: ScoreRequest[] = [];
  for (const problem of problems) {
    const t = teacherTranscript(problem, rng, noise);
    const planPrompt = plannerPrompt(tokenizer, problem.text, roles);
    batch.push({ tokens: [...planPrompt, ...tokenizer.encode(t.plan), end], scoreFrom: planPrompt.length });
    const solvePrompt = solverPrompt(tokenizer, problem.text, t.plan, roles);
    batch.push({ tokens: [...solvePrompt, ...tokenizer.encode(t.solution), end], scoreFrom: solvePrompt.length });
  }
  return batch;
}
