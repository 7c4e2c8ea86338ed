import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chainGraph, predecessors, sequentialGraph, topologicalLevels, WorkflowError } from '../../src/workflow/index.ts';

test('topologicalLevels: chain, diamond, D ≡ 0, declaration order inside a level', () => {
  assert.deepEqual(topologicalLevels(['a', 'b', 'c'], chainGraph(['a', 'b', 'c'])), [['a'], ['b'], ['c']]);
  assert.deepEqual(
    topologicalLevels(['d', 'c', 'b', 'a'], [['a', 'b'], ['a', 'c'], ['b', 'd'], ['c', 'd']]),
    [['a'], ['c', 'b'], ['d']],
  );
  assert.deepEqual(topologicalLevels(['x', 'y', 'z'], []), [['x', 'y', 'z']]);
  // A long edge does not pull an agent earlier than its longest chain allows.
  assert.deepEqual(topologicalLevels(['a', 'b', 'c'], [['a', 'c'], ['a', 'b'], ['b', 'c']]), [['a'], ['b'], ['c']]);
});

test('sequentialGraph lists every earlier → later pair; predecessors are direct only', () => {
  assert.deepEqual(sequentialGraph(['p', 's', 'v']), [['p', 's'], ['p', 'v'], ['s', 'v']]);
  const preds = predecessors(['p', 's', 'v'], chainGraph(['p', 's', 'v']));
  assert.deepEqual([...preds.get('v')!], ['s']);
  assert.deepEqual([...preds.get('p')!], []);
});

test('DAG validation: cycles (named), unknown agents, self-loops and duplicate names are WorkflowErrors', () => {
  const names = ['a', 'b', 'c', 'd'];
  assert.throws(
    () => topologicalLevels(names, [['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'd']]),
    (e: unknown) => e instanceof WorkflowError && e.message === 'dependency graph has a cycle: a -> b -> c -> a',
  );
  // A node downstream of the cycle is listed first: the reported loop is still the cycle itself.
  assert.throws(() => topologicalLevels(['d', 'b', 'c'], [['c', 'd'], ['b', 'c'], ['c', 'b']]), /cycle: (b -> c -> b|c -> b -> c)$/);
  assert.throws(() => topologicalLevels(names, [['a', 'e']]), /unknown agent 'e' \(in edge a -> e\); agents: a, b, c, d/);
  assert.throws(() => topologicalLevels(names, [['a', 'a']]), /agent 'a' depends on itself/);
  assert.throws(() => topologicalLevels(['a', 'a'], []), /agent name 'a' is used twice/);
});
