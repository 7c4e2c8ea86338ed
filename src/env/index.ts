// Environments (spec section 3): one single-use TaskEnv per episode of one problem.
//
//   const env = createEnv(problem);          // MathEnv or CodeEnv by problem.domain
//   const envs = envFactory({ math: { answerRole: 'Reasoner' } });  // (problem) => TaskEnv
import type { TaskEnv } from '../workflow/env-api.ts';
import type { Problem } from './datasets/types.ts';
import { CodeEnv, type CodeEnvOptions } from './code-env.ts';
import { MathEnv, type MathEnvOptions } from './math-env.ts';

export { MathEnv, MATH_PROGRAM_TIMEOUT_MS, answersAgree, consistencyFeedback, type MathEnvOptions, type MathAgentAnswer } from './math-env.ts';
export { CodeEnv, CODE_PROGRAM_TIMEOUT_MS, caseFeedback, codeFirstMessage, type CodeEnvOptions, type CaseCheck, TESTER_COMPARISONS, type TesterComparison } from './code-env.ts';
export * from './rewards.ts';
export { defaultProgramRunner, pythonRunner, type ProgramRunner, type ProgramRun } from './program-runner.ts';

export interface EnvOptions {
  math?: MathEnvOptions;
  code?: CodeEnvOptions;
}

export function createEnv(problem: Problem, options: EnvOptions = {}): TaskEnv {
  return problem.domain === 'math' ? new MathEnv(problem, options.math) : new CodeEnv(problem, options.code);
}

/** A factory the runtime calls once per episode. */
export function envFactory(options: EnvOptions = {}): (problem: Problem) => TaskEnv {
  return (problem) => createEnv(problem, options);
}
