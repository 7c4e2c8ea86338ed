// Output comparison (LiveCodeBench rules) and Python-style equality of JSON values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareOutput, compareValues, parsePyJson, pyJsonEqual, stringifyPyJson } from '../../src/verify/code/index.ts';
import { parseDecimal } from '../../src/verify/code/compare-output.ts';

const eq = (a: string, b: string): boolean => compareOutput(a, b).equal;

test('whole output and each line are stripped; line counts must match', () => {
  assert.equal(eq('1 2\n3\n', '1 2\n3'), true);
  assert.equal(eq('  1 2  \r\n 3\t\n\n\n', '1 2\n3'), true);
  assert.equal(eq('1 2\n\n3', '1 2\n3'), false); // an inner blank line is a line
  assert.equal(eq('1\n2', '1 2'), false);
  assert.equal(eq('', ''), true);
  assert.equal(eq('', '0'), false);
  assert.deepEqual(compareOutput('a\nb', 'a'), { equal: false, reason: 'expected 1 line(s), got 2' });
  assert.deepEqual(compareOutput('a\nb', 'a\nc'), { equal: false, reason: 'line 2 differs' });
});

test('text must match exactly: YES is not NO (unlike TACO), case and inner spacing count for words', () => {
  assert.equal(eq('YES', 'NO'), false);
  assert.equal(eq('yes', 'YES'), false);
  assert.equal(eq('a  b', 'a b'), false);
  assert.equal(eq('hello world', 'hello world'), true);
});

test('lines of decimals compare exactly as Python Decimals', () => {
  assert.equal(eq('1.0 2.50', '1 2.5'), true);
  assert.equal(eq('1e2', '100'), true);
  assert.equal(eq('-0', '0'), true);
  assert.equal(eq('1  2', '1 2'), true); // token-wise once both lines are decimals
  assert.equal(eq('0.1', '0.10000001'), false); // exact, no tolerance
  assert.equal(eq('3.14159', '3.1416'), false);
  assert.equal(eq('1_000', '1000'), true); // Decimal accepts underscores between digits
  assert.equal(eq('1 2 3', '1 2'), false);
  assert.equal(eq('NaN', 'NaN'), true); // same text
  assert.equal(eq('nan', 'NaN'), false); // NaN never equals as a Decimal
  assert.equal(eq('inf', 'Infinity'), true);
  assert.equal(eq('-inf', 'Infinity'), false);
  assert.equal(eq('1.5 x', '1.50 x'), false); // a non-decimal token makes it a text comparison
  assert.equal(eq('.5', '0.5'), true);
  assert.equal(eq('5.', '5'), true);
  assert.equal(eq('0x10', '16'), false);
});

test('the decimal grammar follows Python', () => {
  // Checked against CPython 3.11's decimal.Decimal.
  for (const ok of ['1', '-1', '+1', '1.', '.1', '1e5', '1E-5', '1_0', 'Infinity', '-inf', 'sNaN', 'nan', '1__0', '_1', '1_']) assert.notEqual(parseDecimal(ok), null, ok);
  for (const bad of ['', '.', 'e5', '1e', '--1', '1.2.3', 'one', '0x1', '_']) assert.equal(parseDecimal(bad), null, bad);
});

test('JSON values keep big integers and compare like Python ==', () => {
  const big = parsePyJson('123456789012345678901234567890');
  assert.equal(typeof big, 'bigint');
  assert.equal(pyJsonEqual(big, parsePyJson('123456789012345678901234567891')), false);
  assert.equal(pyJsonEqual(big, parsePyJson('123456789012345678901234567890')), true);
  assert.equal(pyJsonEqual(parsePyJson('1e20'), parsePyJson('100000000000000000000')), true);
  assert.equal(pyJsonEqual(parsePyJson('1.5'), parsePyJson('1')), false);
  assert.equal(pyJsonEqual(1, 1.0), true);
  assert.equal(pyJsonEqual(true, 1), true); // Python: True == 1
  assert.equal(pyJsonEqual(false, 0), true);
  assert.equal(pyJsonEqual(null, 0), false);
  assert.equal(pyJsonEqual('1', 1), false);
  assert.equal(pyJsonEqual([1, [2, 3]], [1, [2, 3]]), true);
  assert.equal(pyJsonEqual([1, 2], [2, 1]), false);
  assert.equal(pyJsonEqual({ a: 1, b: [2] }, { b: [2], a: 1 }), true);
  assert.equal(pyJsonEqual({ a: 1 }, { a: 1, b: 2 }), false);
  assert.equal(pyJsonEqual(parsePyJson('NaN'), parsePyJson('NaN')), false);
  assert.equal(pyJsonEqual([], {}), false);
  assert.equal(stringifyPyJson(parsePyJson('{"x":[1,2.5,123456789012345678901234567890,"s",null,true]}')), '{"x":[1,2.5,123456789012345678901234567890,"s",null,true]}');
  assert.equal(stringifyPyJson(parsePyJson('{"__proto__": 1}')), '{"__proto__":1}');
  assert.throws(() => parsePyJson('[1,'), /position/);
  assert.throws(() => parsePyJson('{"a" 1}'), /expected ':'/);
  assert.throws(() => parsePyJson('1 2'), /after the value/);
});

test('hostile outputs are compared in linear time', () => {
  const t0 = performance.now();
  assert.equal(eq(`1${'0'.repeat(300_000)}1 ${' '.repeat(300_000)}x`, '1'), false);
  assert.equal(eq(`1${'0'.repeat(300_000)}1${'0'.repeat(300_000)}`, `1${'0'.repeat(300_000)}1${'0'.repeat(300_000)}.0`), true);
  assert.equal(eq(`a${' '.repeat(300_000)}b\n`, 'a b'), false);
  assert.ok(performance.now() - t0 < 2000, `${performance.now() - t0} ms`);
});

test('compareValues: the same values in any line layout, decimals as Python Decimals, words exactly', () => {
  const same = (a: string, b: string): boolean => compareValues(a, b).equal;
  assert.equal(same('7\n12\n', '7 12'), true);
  assert.equal(same('  1 2\n3\n', '1\n2 3\n\n'), true);
  assert.equal(same('1.0\n2e1', '1 20'), true);
  assert.equal(same('YES', 'NO'), false);
  assert.equal(same('7 12', '7 12 0'), false);
  assert.deepEqual(compareValues('7 12', '7 13'), { equal: false, reason: 'value 2 differs' });
  assert.deepEqual(compareValues('7', '7 12'), { equal: false, reason: 'expected 2 value(s), got 1' });
  // The line rule still tells the layouts apart.
  assert.equal(compareOutput('7\n12\n', '7 12').equal, false);
});
