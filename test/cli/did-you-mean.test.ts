// The edit distance and the nearness rule behind every "did you mean" (src/core/did-you-mean.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closest, editDistance } from '../../src/core/did-you-mean.ts';

test('edit distance: insertions, deletions, substitutions and neighbour swaps cost 1 each', () => {
  assert.equal(editDistance('', ''), 0);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(editDistance('trian', 'train'), 1);
  assert.equal(editDistance('ca', 'abc'), 3); // optimal string alignment: a swapped pair is not edited again
  assert.equal(editDistance('run-dri', 'run-dir'), 1);
});

test('closest: within a third of the length, case ignored, ties to the first, nothing for unrelated words', () => {
  assert.equal(closest('trian', ['demo', 'train', 'eval']), 'train');
  assert.equal(closest('TRAIN', ['train']), 'train');
  assert.equal(closest('z', ['a', 'b']), null);
  assert.equal(closest('xyz', ['demo', 'eval']), null);
  assert.equal(closest('batchsiz', ['batchSize', 'rolloutsPerPrompt']), 'batchSize');
  assert.equal(closest('ab', ['ax', 'ay']), 'ax');
  assert.equal(closest('algoritm', ['seed', 'algorithm', 'task']), 'algorithm');
  assert.equal(closest('learningrate', ['lr']), null);
});
