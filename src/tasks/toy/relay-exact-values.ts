// The relay game's exact state values under the current policies (issue 19: explained variance
// against exact values where they can be enumerated; the exact critic of the MARFT-against-IPPO
// experiment, docs/training.md). One environment step and a 0/1 team reward, so the value of a
// state is the probability that the last agent answers the secret from it.
//
// Each agent's policy is a table π_i(a | x) over its single prompt token x (agent1: the secret's
// symbol; agent i > 1: the message delivered to it), read from the engine by scoring every token a
// after every x at the rollout's temperature. Delivery D(d | a): the sent token with probability
// 1 − p, else a uniform symbol (noise p). Backwards from the last agent (0-based index n − 1):
//   f_{n−1}(x, s) = π_{n−1}(sym(s) | x)
//   f_i(x, s)     = Σ_a π_i(a | x) Σ_d D(d | a) f_{i+1}(d, s)
// The joint state before agent i (the secret and the messages delivered so far) is worth
// f_i(x_i, s), x_i its prompt token. An agent's own prompt x (what an IPPO critic reads) is worth
// the same averaged over the secrets that lead to it: Σ_s q_i(x | s) f_i(x, s) / Σ_s q_i(x | s),
// with q_0(x | s) = [x = sym(s)], q_{i+1}(d | s) = Σ_x q_i(x | s) Σ_a π_i(a | x) D(d | a) and the
// secrets uniform, as training draws them.
import type { SamplingEngine } from '../../engine/types.ts';
import type { ExactValuesRequest } from '../../train/task.ts';
import { policyTarget } from '../../workflow/sampler.ts';
import type { Episode } from '../../workflow/trajectory.ts';

export interface RelayShape {
  agents: number;
  symbols: number;
  noise: number;
  bos: number;
  tag: (agentIndex: number) => number;
  symbol: (k: number) => number;
  vocabSize: number;
  names: readonly string[];
}

/** π_i(a | x) for every agent i, prompt token x and action a, as the sampler draws (null: a truncated or greedy sampler, not enumerated here). */
async function policyTables(engine: SamplingEngine, shape: RelayShape, request: ExactValuesRequest): Promise<number[][][] | null> {
  const { temperature, topP, topK } = request.sampling;
  if (!(temperature > 0) || topP < 1 || topK > 0) return null;
  const V = shape.vocabSize;
  const tables: number[][][] = [];
  for (let i = 0; i < shape.agents; i++) {
    const batch = [];
    for (let x = 0; x < V; x++) for (let a = 0; a < V; a++) batch.push({ tokens: [shape.bos, shape.tag(i), x, a], scoreFrom: 3 });
    const logprobs = await engine.score(policyTarget(request.policies[shape.names[i]!]!), batch, { temperature });
    tables.push(Array.from({ length: V }, (_, x) => Array.from({ length: V }, (_, a) => Math.exp(logprobs[x * V + a]![0]!))));
  }
  return tables;
}

/** D(d | a) as a row over d for each sent token a. */
function deliveryRows(shape: RelayShape): number[][] {
  const V = shape.vocabSize;
  return Array.from({ length: V }, (_, a) => {
    const row = new Array<number>(V).fill(0);
    row[a] = 1 - shape.noise;
    for (let k = 0; k < shape.symbols; k++) row[shape.symbol(k)]! += shape.noise / shape.symbols;
    return row;
  });
}

/** The exact values of every action's state in `episodes` (relay-game's Task.exactValues). */
export async function relayExactValues(engine: SamplingEngine, episodes: Episode[], request: ExactValuesRequest, shape: RelayShape): Promise<number[][] | null> {
  const pi = await policyTables(engine, shape, request);
  if (!pi) return null;
  const n = shape.agents, K = shape.symbols, V = shape.vocabSize;
  const D = deliveryRows(shape);
  // next[i][a][s] = Σ_d D(d | a) f_{i+1}(d, s), the value of agent i sending a.
  const f: number[][][] = new Array(n);
  f[n - 1] = Array.from({ length: V }, (_, x) => Array.from({ length: K }, (_, s) => pi[n - 1]![x]![shape.symbol(s)]!));
  for (let i = n - 2; i >= 0; i--) {
    const after = Array.from({ length: V }, (_, a) => Array.from({ length: K }, (_, s) => D[a]!.reduce((sum, p, d) => sum + p * f[i + 1]![d]![s]!, 0)));
    f[i] = Array.from({ length: V }, (_, x) => Array.from({ length: K }, (_, s) => pi[i]![x]!.reduce((sum, p, a) => sum + p * after[a]![s]!, 0)));
  }
  // q[i][x][s]: probability that agent i's prompt token is x given secret s.
  const q: number[][][] = [Array.from({ length: V }, (_, x) => Array.from({ length: K }, (_, s) => (x === shape.symbol(s) ? 1 : 0)))];
  for (let i = 0; i + 1 < n; i++) {
    const sent = Array.from({ length: V }, (_, a) => Array.from({ length: K }, (_, s) => q[i]!.reduce((sum, row, x) => sum + row[s]! * pi[i]![x]![a]!, 0)));
    q.push(Array.from({ length: V }, (_, d) => Array.from({ length: K }, (_, s) => sent.reduce((sum, row, a) => sum + row[s]! * D[a]![d]!, 0))));
  }
  const own = (i: number, x: number): number => {
    let num = 0, den = 0;
    for (let s = 0; s < K; s++) (num += q[i]![x]![s]! * f[i]![x]![s]!), (den += q[i]![x]![s]!);
    return den > 0 ? num / den : 0;
  };
  return episodes.map((ep) => {
    const secret = (ep.info as { secret: number }).secret;
    return ep.actions.map((a) => {
      const x = a.promptTokens[2]!;
      return request.view === 'joint' ? f[a.agentIndex]![x]![secret]! : own(a.agentIndex, x);
    });
  });
}
