// Public entry of the Flex-MG runtime and the built-in workflows.
export type { ActionRecord, StepRecord, Episode } from './trajectory.ts';
export { actionSequence } from './trajectory.ts';
export type { Agent } from './agent.ts';
export { BASE_POLICY } from './agent.ts';
export type { AgentOutput, StepInput, StepOutcome, TaskEnv } from './env-api.ts';
export { WorkflowError } from './errors.ts';
export { chainGraph, emptyGraph, predecessors, sequentialGraph, topologicalLevels, type Edge } from './graph.ts';
export { engineSampler, policyTarget, type ActionSampler, type SampleRequest } from './sampler.ts';
export { ScriptedSampler, defaultScriptedLogprob, type Script, type ScriptInput, type ScriptedReply } from './scripted-sampler.ts';
export { withPolicies, type ObservationBuilder, type ObservationContext, type Orchestrator, type RouterContext, type StopContext, type TurnRecord, type Workflow } from './workflow.ts';
export { jointStateMessages, speakerLabels, type JointAction, type JointStateInput } from './joint-state.ts';
export { advanceEpisodes, finishedEpisode, rollout, runEpisodes, validateWorkflow, type RolloutOptions } from './rollout.ts';
export { EpisodeState, type StepPlan } from './episode-state.ts';
export { bestCandidate, jointTreeRollout, type JointContinuation, type JointTreeOptions, type TurnScore } from './joint-tree-sampling.ts';
export { treeRollout, type TreeRolloutOptions } from './tree-sampling.ts';
export { ROLES, ordinal, turnMessage, type Domain, type PolicyChoice } from './builtin/roles.ts';
export { extractHashAnswer, extractPythonCode, extractTestCase } from './builtin/formats.ts';
export {
  MARFT_GENERATION_CAPS,
  MARFT_INPUT_CAPS,
  conversationObservation,
  pipelineAgents,
  sequentialPipeline,
  type PipelineOptions,
  type PipelineSize,
} from './builtin/pipelines.ts';
export { coderTester, multiTurnPair, pairAgents, pairObservation, reasonerToolUser, type PairOptions } from './builtin/pairs.ts';
export { selfConsistent, singleAgentMultiTurn, singleAgentSingleTurn, type SingleAgentOptions } from './builtin/single-agent.ts';
export { actionLossMask, actionSpans, checkEpisode, type ActionSpan } from './episode-tokens.ts';
