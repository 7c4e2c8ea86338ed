// A scripted TaskEnv for the workflow tests: records what each step received and answers with
// outcomes chosen by the test.
import type { StepInput, StepOutcome, TaskEnv } from '../../src/workflow/index.ts';
import type { SampleParams } from '../../src/engine/types.ts';

export class FakeEnv implements TaskEnv {
  readonly seen: StepInput[] = [];
  constructor(
    readonly problemId: string,
    readonly firstMessage: string,
    private readonly outcome: (step: StepInput) => StepOutcome = () => ({ teamReward: 0, done: false }),
    readonly sameAnswer?: (a: string, b: string) => boolean,
  ) {}
  onStep(step: StepInput): StepOutcome {
    this.seen.push(step);
    return this.outcome(step);
  }
  finalScore() {
    return { score: this.seen.length, info: { steps: this.seen.length } };
  }
}

export const PARAMS: SampleParams = {
  temperature: 1,
  topP: 1,
  topK: 0,
  maxNewTokens: 200,
  stopTokenIds: [],
  stopStrings: [],
  seed: 100,
};
