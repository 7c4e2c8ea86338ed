// MAS-OPD (spec section 5; docs/mas-opd.md): on-policy distillation of a multi-agent system from a
// frozen teacher, through the same pipeline as every algorithm:
//   rollout    its own hook: the workflow with the current students, keeping each action's chat
//              messages and each turn's record (src/opd/rollout.ts), one episode per problem
//   rewards    none: nothing reads a reward
//   credit     the teacher-scored estimator (src/opd/teacher-estimator.ts): A = A_OPD + λ·A_role per
//              token, PAC verdicts in the teacher's context
//   loss       −sg(A)·log π per token, importance-weighted by min(π/μ, actor.behaviourCap) on the
//              minibatches after the first (on the first the ratio is 1; the paper names no
//              correction, and the cap keeps the ratio bounded), weighed per Eq. 13: the mean over a
//              response's tokens, over the role's turns within each trajectory, over the
//              trajectories where the role acted, over roles (role-trajectory-turn-token-mean), or
//              with opd.turnWeighting: pooled the role's turns pooled over the minibatch
//              (role-turn-token-mean)
//   update     one synchronous update of every role's adapter per minibatch of opd.minibatchSize
//              episodes; one adapter per role (agents of one role share it), no critic, no KL
import { ConfigError } from '../config/schema-dsl.ts';
import { configuredConditions, opdSettingsOf } from '../opd/config-settings.ts';
import { distillationOf } from '../opd/distillable-task.ts';
import { conditionText, contrastRole, type RoleConditionTable } from '../opd/role-conditions.ts';
import { distillationRollout } from '../opd/rollout.ts';
import { teacherScoredEstimator } from '../opd/teacher-estimator.ts';
import { assertSameTokenizer } from '../opd/tokenizer-match.ts';
import { withPolicies } from '../workflow/index.ts';
import type { Algorithm } from './types.ts';

/** Adapter name of a role's student policy. */
export function roleAdapter(role: string): string {
  return `opd-${role.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

export const masOpd: Algorithm = {
  name: 'mas-opd',
  summary: 'MAS-OPD: per-token advantages from a role-conditioned teacher (OPD + λ·RAS, PAC verdicts), one adapter per role, no reward, critic or clipping',
  plan: (agents, config, task) => {
    // Roles come from the task's workflow; without one (a plan checked on bare agent names) each
    // agent is its own role, and the plan is refused when it is prepared for a run.
    const source = task ? distillationOf(task) : null;
    const roleOf = new Map(source?.workflow.agents.map((a) => [a.name, a.role]) ?? []);
    const roles = Object.fromEntries(agents.map((a) => [a, roleOf.get(a) ?? a]));
    const policies = Object.fromEntries(agents.map((a) => [a, roleAdapter(roles[a]!)]));
    const settings = opdSettingsOf(config);
    let conditions: RoleConditionTable | undefined;
    const conditionTable = () => (conditions ??= configuredConditions(config.opd));
    const workflow = source ? withPolicies(source.workflow, policies) : null;
    return {
      sampling: 'independent',
      level: 'token',
      policies,
      roles,
      critics: null,
      chain: 'per-agent',
      reward: 'none',
      criticInput: 'own',
      advantage: teacherScoredEstimator(() => (source ? { tokenizer: source.tokenizer, conditions: conditionTable(), attribute: source.attribute, settings } : null)),
      policyLoss: 'importance-weighted-pg',
      aggregation: config.opd.turnWeighting === 'pooled' ? 'role-turn-token-mean' : 'role-trajectory-turn-token-mean',
      split: { by: 'episodes', size: config.opd.minibatchSize },
      scaleRewards: false,
      whitenAdvantages: false,
      kl: false,
      rollout: async (engine, request) => {
        if (!source || !workflow) throw new ConfigError(`algorithm: mas-opd trains the roles of a Flex-MG workflow; task '${config.task.name}' has none (use task 'workflow')`);
        return distillationRollout(engine, source.tokenizer, workflow, source.trainEnvs(request.batchSize, request.seed), request.sampling, request.seed);
      },
      prepare: async ({ engine, teacher, notice }) => {
        if (!source) throw new ConfigError(`algorithm: mas-opd trains the roles of a Flex-MG workflow; task '${config.task.name}' has none (use task 'workflow')`);
        if (!teacher) throw new ConfigError('teacher.path: algorithm mas-opd needs a teacher model (a Hugging Face model folder)');
        if (engine.info.vocabSize < source.tokenizer.vocabSize) throw new ConfigError(`model: the students' model has ${engine.info.vocabSize} embeddings, fewer than their tokenizer's ${source.tokenizer.vocabSize} ids`);
        // The teacher's model must cover the students' token ids (its own tokenizer, when it has one, src/run/teacher.ts checks).
        assertSameTokenizer(source.tokenizer, source.tokenizer, teacher.info.vocabSize);
        // Every role's condition (and κ, when RAS is on) is looked up now, so a missing one fails before step 0.
        for (const role of new Set(Object.values(roles))) {
          conditionText(conditionTable(), role);
          if (settings.lambda !== 0) conditionText(conditionTable(), contrastRole(conditionTable(), role));
        }
        if (settings.pac && !source.attribute) notice(`opd.pac: task '${config.task.name}' has no PAC rules for this workflow (only the Reasoner–Tool-User and Coder–Tester pairs have them); training without verdicts`);
      },
    };
  },
};
