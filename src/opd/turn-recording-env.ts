// PAC needs what the environment established at every turn, not only at the last one: this wrapper
// runs the real environment and, after each step, keeps a copy of its finalScore().info (the
// environment's reading of that turn: answers, program statuses, correctness against the
// reference). The copies land in the episode's info as `turns`, read only by the training-time
// verifier (src/opd/math-attributor.ts); nothing of it reaches an agent. An environment that keeps
// a separate verifier's reading of its last step (CodeEnv's verification(): golden-test and
// reference-solution booleans, the program runs on the Tester cases) has it recorded too, as the
// turn's `verification` (src/opd/code-attributor.ts).
import type { StepInput, StepOutcome, TaskEnv } from '../workflow/env-api.ts';

/** An environment with a training-time verifier's reading of its last step (CodeEnv). */
interface VerifyingEnv {
  verification(): unknown;
}

const verifying = (env: TaskEnv): env is TaskEnv & VerifyingEnv => typeof (env as Partial<VerifyingEnv>).verification === 'function';

export class TurnRecordingEnv implements TaskEnv {
  readonly problemId: string;
  readonly firstMessage: string;
  private readonly turns: Record<string, unknown>[] = [];

  constructor(private readonly inner: TaskEnv) {
    this.problemId = inner.problemId;
    this.firstMessage = inner.firstMessage;
    if (inner.sameAnswer) this.sameAnswer = (a, b) => inner.sameAnswer!(a, b);
  }

  sameAnswer?: (previous: string, current: string) => boolean;

  async onStep(step: StepInput): Promise<StepOutcome> {
    const outcome = await this.inner.onStep(step);
    const turn = structuredClone(this.inner.finalScore().info);
    if (verifying(this.inner)) turn.verification = structuredClone(this.inner.verification());
    this.turns.push(turn);
    return outcome;
  }

  finalScore(): { score: number; info: Record<string, unknown> } {
    const final = this.inner.finalScore();
    return { score: final.score, info: { ...final.info, turns: this.turns } };
  }
}
