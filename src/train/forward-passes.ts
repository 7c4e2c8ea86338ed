// Forward passes over the training batch in micro-batches capped in tokens: old critic values,
// frozen-reference and proximal log-probs (no graphs kept).
import type { Engine, Target } from '../engine/types.ts';
import type { CreditLevel, TrainAction } from './types.ts';
import { groupBy, microBatches } from '../core/batching.ts';

/**
 * The sequence the critic scores: its input (the joint state, or the agent's own prompt) followed
 * by the whole action (token level: a value before every action token) or by the action's first
 * token (action level: only V(input) is needed).
 */
export function criticRequest(a: TrainAction, level: CreditLevel): { tokens: number[]; scoreFrom: number } {
  const action = a.tokens.slice(a.scoreFrom);
  return { tokens: [...a.criticTokens, ...(level === 'token' ? action : action.slice(0, 1))], scoreFrom: a.criticTokens.length };
}

/** Runs `target` over the actions, micro-batch by micro-batch, handing each output back. */
export async function forwardActions(
  engine: Engine,
  target: Target,
  actions: TrainAction[],
  request: (a: TrainAction) => { tokens: number[]; scoreFrom: number },
  capTokens: number,
  temperature: number,
  store: (a: TrainAction, logprobs: Float32Array | undefined, values: Float32Array | undefined) => void,
): Promise<void> {
  // Each request once: a critic's request copies its input (criticRequest), and sizing the
  // micro-batches needs it as well as the forward pass.
  const requests = actions.map((a) => ({ a, r: request(a) }));
  for (const mb of microBatches(requests, ({ r }) => r.tokens.length, capTokens)) {
    const out = await engine.forward(target, mb.map(({ r }) => r), { temperature });
    mb.forEach(({ a }, b) => store(a, out.logprobs?.[b], out.values?.[b]));
  }
}

/** Old values of every action from its critic. */
export async function fillValues(engine: Engine, actions: TrainAction[], level: CreditLevel, capTokens: number): Promise<void> {
  for (const [critic, group] of groupBy(actions, (a) => a.critic!)) {
    await forwardActions(engine, { kind: 'critic', name: critic }, group, (a) => criticRequest(a, level), capTokens, 1, (a, _lp, values) => {
      if (!values) throw new Error(`critic '${critic}' returned no values`);
      a.values_K = values;
    });
  }
}
