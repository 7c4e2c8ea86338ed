import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boolOption, intOption, numberOption, oneOfOption, rejectUnknown, stringOption, TaskOptionError } from '../../src/tasks/options.ts';
import { coordinationGame } from '../../src/tasks/toy/coordination-game.ts';
import { bandit } from '../../src/tasks/toy/bandit.ts';

test('option readers return the fallback when absent and the value when valid', () => {
  assert.equal(intOption({}, 'n', 7, 1), 7);
  assert.equal(intOption({ n: 3 }, 'n', 7, 1, 8), 3);
  assert.equal(numberOption({ x: 0.5 }, 'x', 1, 0, 1), 0.5);
  assert.equal(boolOption({}, 'b', true), true);
  assert.equal(boolOption({ b: false }, 'b', true), false);
  assert.equal(oneOfOption({ m: 'split' }, 'm', ['broadcast', 'split'] as const, 'broadcast'), 'split');
  assert.equal(stringOption({}, 's'), undefined);
  assert.equal(stringOption({ s: 'a' }, 's'), 'a');
});

test('option readers name the key, the value and what was expected', () => {
  assert.throws(() => intOption({ n: 2.5 }, 'n', 1, 1), /^TaskOptionError: task\.options\.n: got 2\.5, expected an integer >= 1$/);
  assert.throws(() => intOption({ n: 9 }, 'n', 1, 1, 8), /task\.options\.n: got 9, expected an integer in 1\.\.8$/);
  assert.throws(() => numberOption({ x: 2 }, 'x', 1, 0, 1), /task\.options\.x: got 2, expected a number in \[0, 1\]$/);
  assert.throws(() => boolOption({ b: 'yes' }, 'b', true), /task\.options\.b: got "yes", expected true or false$/);
  assert.throws(() => oneOfOption({ m: 'x' }, 'm', ['a', 'b'], 'a'), /task\.options\.m: got "x", expected one of 'a', 'b'$/);
  assert.throws(() => stringOption({ s: '' }, 's'), /task\.options\.s: got "", expected a non-empty string$/);
  assert.throws(() => rejectUnknown({ a: 1, z: 2 }, ['a'], 'demo-task'), /task\.options\.z: unknown option of demo-task \(known: a\)$/);
});

test('the toy tasks report bad options through the shared readers', () => {
  assert.throws(() => coordinationGame({ symbols: 0 }), (e) => e instanceof TaskOptionError && /task\.options\.symbols: got 0, expected an integer >= 1/.test(e.message));
  assert.throws(() => coordinationGame({ dependency: 1 }), /task\.options\.dependency: got 1, expected true or false/);
  // How the team reward is shared is the run's reward.share now: the old key is refused in one line naming it.
  assert.throws(() => coordinationGame({ teamReward: 'split' }), (e) => e instanceof TaskOptionError && /^task\.options\.teamReward: moved to the configuration's reward section: set reward\.share \(broadcast or split\)$/.test(e.message));
  assert.throws(() => coordinationGame({ hiddenSize: 6 }), /task\.options\.hiddenSize: got 6, expected a positive multiple of 4/);
  assert.throws(() => coordinationGame({ symbol: 4 }), /task\.options\.symbol: unknown option of coordination-game \(known: symbols, /);
  assert.throws(() => bandit({ armRewards: [] }), /task\.options\.armRewards: got \[\], expected a non-empty list of numbers/);
  assert.throws(() => bandit({ arms: [1] }), /task\.options\.arms: unknown option of bandit \(known: armRewards, hiddenSize\)/);
  assert.equal(coordinationGame({ symbols: 3, hiddenSize: 32 }).vocabSize, 6);
  assert.equal(bandit({ armRewards: [0, 1] }).vocabSize, 4);
});
