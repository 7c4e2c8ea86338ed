// An agent of a Flex-MG workflow: who it is (name, role), how it is prompted, which policy acts for it.
import type { SampleParams } from '../engine/types.ts';

export interface Agent {
  /** Unique in the workflow; used in D, in trajectories and in environments' per-agent maps. */
  name: string;
  /** Role name shown in prompts ("Now it is {role}'s turn.") and used by environments. */
  role: string;
  systemPrompt: string;
  /** One line: what this role does (spec section 2). */
  roleDescription: string;
  /** The adapter that acts for this agent, or "base" for the frozen base model. */
  policy: string;
  /** Per-agent overrides of the rollout's sampling parameters (e.g. per-agent maxNewTokens caps). */
  sampleParams?: Partial<SampleParams>;
}

/** The policy name that means "the frozen base model, no adapter". */
export const BASE_POLICY = 'base';
