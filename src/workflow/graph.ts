// The dependency function D of a Flex-MG (spec section 1) as a DAG over agent names.
//
// An edge [i, j] means D(aⁱ, aʲ) = 1: agent j conditions on agent i's action at the same step,
// so i acts first and j sees i's output. Direct edges only: a sequential pipeline in which every
// agent sees all earlier ones (a^{1:m-1}) lists every pair (see sequentialGraph).
import { WorkflowError } from './errors.ts';

export type Edge = readonly [from: string, to: string];

/** Every earlier agent → every later agent: the auto-regressive pipeline aᵐ ~ π(· | s, a^{1:m-1}). */
export function sequentialGraph(names: readonly string[]): Edge[] {
  const edges: Edge[] = [];
  for (let j = 0; j < names.length; j++) for (let i = 0; i < j; i++) edges.push([names[i]!, names[j]!]);
  return edges;
}

/** Each agent sees only the one before it. */
export function chainGraph(names: readonly string[]): Edge[] {
  return names.slice(1).map((n, k) => [names[k]!, n] as const);
}

/** D ≡ 0: every agent acts on the state alone (all act in one round). */
export function emptyGraph(): Edge[] {
  return [];
}

/**
 * Validates D over `names` and returns its topological levels: level k holds the agents whose
 * longest chain of predecessors has length k, in declaration order. Agents of one level act in
 * the same sampling round; levels.flat() is the execution order. Throws WorkflowError for an
 * unknown agent, a self-loop, a duplicate agent name or a cycle (naming the cycle).
 */
export function topologicalLevels(names: readonly string[], edges: readonly Edge[]): string[][] {
  const index = new Map<string, number>();
  names.forEach((n, k) => {
    if (index.has(n)) throw new WorkflowError(`agent name '${n}' is used twice`);
    index.set(n, k);
  });
  const succ: number[][] = names.map(() => []);
  const indegree = names.map(() => 0);
  for (const [from, to] of edges) {
    const i = index.get(from);
    const j = index.get(to);
    if (i === undefined) throw new WorkflowError(`dependency graph: unknown agent '${from}' (in edge ${from} -> ${to}); agents: ${names.join(', ')}`);
    if (j === undefined) throw new WorkflowError(`dependency graph: unknown agent '${to}' (in edge ${from} -> ${to}); agents: ${names.join(', ')}`);
    if (i === j) throw new WorkflowError(`dependency graph: agent '${from}' depends on itself`);
    if (succ[i]!.includes(j)) continue;
    succ[i]!.push(j);
    indegree[j]!++;
  }
  const level = names.map(() => 0);
  const ready = names.map((_, k) => k).filter((k) => indegree[k] === 0);
  let visited = 0;
  while (ready.length > 0) {
    const i = ready.shift()!;
    visited++;
    for (const j of succ[i]!) {
      level[j] = Math.max(level[j]!, level[i]! + 1);
      if (--indegree[j]! === 0) ready.push(j);
    }
  }
  if (visited < names.length) throw new WorkflowError(`dependency graph has a cycle: ${findCycle(names, succ, indegree).join(' -> ')}`);
  const levels: string[][] = [];
  names.forEach((n, k) => (levels[level[k]!] ??= []).push(n));
  return levels;
}

/**
 * A cycle among the agents Kahn's algorithm could not order (indegree left). Every such agent has
 * a predecessor that is also left, so walking predecessors must revisit an agent: that loop is a cycle.
 */
function findCycle(names: readonly string[], succ: number[][], indegree: number[]): string[] {
  const left = (k: number) => indegree[k]! > 0;
  const predOf = (j: number) => succ.findIndex((s, i) => left(i) && s.includes(j));
  const path: number[] = [];
  const onPath = new Map<number, number>();
  let node = indegree.findIndex((d) => d > 0);
  while (!onPath.has(node)) {
    onPath.set(node, path.length);
    path.push(node);
    node = predOf(node);
  }
  const cycle = [...path.slice(onPath.get(node)!), node].reverse();
  return cycle.map((k) => names[k]!);
}

/** Direct predecessors of each agent under D (whose outputs it sees at the same step). */
export function predecessors(names: readonly string[], edges: readonly Edge[]): Map<string, Set<string>> {
  const preds = new Map<string, Set<string>>(names.map((n) => [n, new Set<string>()]));
  for (const [from, to] of edges) preds.get(to)?.add(from);
  return preds;
}
