// MAS-OPD (spec section 5; docs/mas-opd.md): on-policy distillation of a multi-agent system from a
// frozen teacher. Not a composition of the RL parts: the trainer's 'mas-opd' step function
// (src/opd/opd-run-step.ts) rolls out, scores every response under the role-conditioned teacher and
// updates one adapter per role. The plan only names those adapters (agents of one role share one)
// and has no critic; its RL fields are read by nothing and are filled with the nearest description.
import { distillationOf } from '../opd/distillable-task.ts';
import { roleAdapter } from '../opd/opd-train.ts';
import type { Algorithm } from './types.ts';

export const masOpd: Algorithm = {
  name: 'mas-opd',
  summary: 'MAS-OPD: per-token advantages from a role-conditioned teacher (OPD + λ·RAS, PAC verdicts), one adapter per role, no reward, critic or clipping',
  plan: (agents, _config, task) => {
    // Roles come from the task's workflow; without one (a plan checked on bare agent names) each
    // agent is its own role.
    const source = task ? distillationOf(task) : null;
    const roleOf = new Map(source?.workflow.agents.map((a) => [a.name, a.role]) ?? []);
    return {
      kind: 'mas-opd',
      sampling: 'independent',
      level: 'token',
      policies: Object.fromEntries(agents.map((a) => [a, roleAdapter(roleOf.get(a) ?? a)])),
      critics: null,
      chain: 'per-agent',
      reward: 'outcome',
      criticInput: 'own',
      // Not read (see above): the objective is −sg(A)·log π per token, importance-weighted after the first minibatch.
      advantage: 'group-relative-no-std',
      policyLoss: 'importance-weighted-pg',
      scaleRewards: false,
      whitenAdvantages: false,
      kl: false,
    };
  },
};
