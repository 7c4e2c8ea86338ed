// MAGRPO (Liu et al., "LLM Collaboration with Multi-Agent Reinforcement Learning"): G aligned
// joint samples per problem (the i-th episode's actions are the i-th joint sample); the turn's
// joint reward; Monte-Carlo return-to-go with γ across turns; advantage = return − the node's
// mean return (no std), shared by every agent of the joint sample; REINFORCE (−A·log π of the
// whole response: action-level units, log-prob per actor.actionNormalisation); no critic, no
// clipping, no KL; an independent policy per agent whatever policy.parameterSharing says.
// With rollout.jointTree best or all, on multi-turn tasks that can copy their state, the joint
// samples of a problem form a tree (src/workflow/joint-tree-sampling.ts): at every node G copies of
// the state each play a whole turn, the node's G joint samples are a group, and the best continues
// (or all do: the authors' code); the default, independent, is the MAS-OPD paper's G episodes.
// advantage.jointActions: cross replaces the aligned joint samples of a single-turn task that
// scores combinations (Task.jointRewards) by all G^n of them (src/train/credit/return-to-go-group-mean.ts).
import { policyAdapters, type Algorithm } from './types.ts';

export const magrpo: Algorithm = {
  name: 'magrpo',
  summary: 'MAGRPO: aligned joint samples, return-to-go minus the group mean shared by the agents, REINFORCE, independent policies',
  plan: (agents, config, task) => ({
    sampling: 'group',
    ...(config.rollout.jointTree !== 'independent' && task?.jointTreeSampling ? { jointTree: config.rollout.jointTree } : {}),
    level: 'action',
    policies: policyAdapters(agents, false),
    critics: null,
    chain: 'joint',
    // The team reward once per turn (plus role-local rewards): their sum is the turn's joint reward.
    reward: 'step-end',
    criticInput: 'joint',
    advantage: 'return-to-go-group-mean',
    policyLoss: 'policy-gradient',
    scaleRewards: false,
    whitenAdvantages: false,
    kl: false,
  }),
};
