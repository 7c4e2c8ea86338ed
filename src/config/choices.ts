// The allowed values of the configuration's choice keys. They live in the configuration layer, which
// the training modules that act on them import, so that src/config/ depends on nothing in src/train/ (the
// schema describes the settings; the trainer consumes them).

/** `algorithm`: action-level MARFT, token-level MARFT, independent PPO, trajectory-level variant, GRPO, MAGRPO, AT-GRPO, CURE, MAS-OPD (src/algorithms/index.ts). */
export const ALGORITHMS = ['marft-action', 'marft-token', 'ippo', 'marft-outcome', 'grpo', 'magrpo', 'at-grpo', 'cure', 'mas-opd'] as const;
export type AlgorithmName = (typeof ALGORITHMS)[number];

/** `actor.actionNormalisation`: an action's log-prob is the token sum, or divided by its token or word count. */
export const ACTION_NORMALISATIONS = ['sum', 'token', 'word'] as const;
export type ActionNormalisation = (typeof ACTION_NORMALISATIONS)[number];

/** `critic.valueLoss`: squared error or Huber. */
export const VALUE_LOSS_KINDS = ['mse', 'huber'] as const;
export type ValueLossKind = (typeof VALUE_LOSS_KINDS)[number];

/** `*.optim.schedule`: learning-rate schedule after warmup. */
export const SCHEDULE_KINDS = ['cosine', 'constant'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

/** `advantage.groupScale`: GRPO divides by the group's standard deviation, or only subtracts the mean. */
export const GROUP_SCALES = ['std', 'none'] as const;
export type GroupScale = (typeof GROUP_SCALES)[number];

/**
 * `advantage.groupBy` (grpo): a response is compared with the same role's responses to the same
 * problem over every turn (role: MAS+GRPO as the MAS-OPD paper defines it), or only with those of the
 * same turn (role-turn: AT-GRPO's turn-wise grouping).
 */
export const GROUP_KEYS = ['role', 'role-turn'] as const;
export type GroupKey = (typeof GROUP_KEYS)[number];

/**
 * `opd.turnWeighting`: how MAS-OPD's Eq. 13 weighs a role's turns: the mean over its turns within each
 * trajectory, then over trajectories (trajectory), or one mean over the role's turns of the whole
 * minibatch (pooled: a trajectory with more turns weighs more).
 */
export const TURN_WEIGHTINGS = ['trajectory', 'pooled'] as const;
export type TurnWeighting = (typeof TURN_WEIGHTINGS)[number];

/**
 * `opd.roleLine`: which part of a student's first system message MAS-OPD's teacher context replaces
 * with the role condition (src/opd/teacher-context.ts): its leading sentences that name a role (the
 * role and its collaborator), its first sentence, its first line, or all of it.
 */
export const ROLE_LINE_RULES = ['role-sentences', 'first-sentence', 'first-line', 'system-message'] as const;
export type RoleLineRule = (typeof ROLE_LINE_RULES)[number];

/** `log.to`: where a training run reports besides RUN/metrics.jsonl (src/runs/trackers/). */
export const LOG_TARGETS = ['console', 'tensorboard', 'csv'] as const;
export type LogTarget = (typeof LOG_TARGETS)[number];

/**
 * `reward.team`: which team reward each turn of an episode receives: the episode's final outcome at
 * every turn (spec section 3, MAS-OPD App. D.4), or each turn's own result as the environment
 * reported it (src/train/rewards.ts).
 */
export const TEAM_REWARD_SOURCES = ['outcome', 'turn'] as const;
export type TeamRewardSource = (typeof TEAM_REWARD_SOURCES)[number];

/** `reward.share`: where every action receives a team reward, each receives all of it or an equal share of its turn's. */
export const TEAM_SHARES = ['broadcast', 'split'] as const;
export type TeamShare = (typeof TEAM_SHARES)[number];
