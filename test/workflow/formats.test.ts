import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractHashAnswer, extractPythonCode, extractTestCase } from '../../src/workflow/index.ts';

test('extractPythonCode takes the last fenced block (python, py or bare)', () => {
  assert.equal(extractPythonCode('x\n```python\nprint(1)\n```\nthen\n```py\nprint(2)  \n\n```'), 'print(2)\n');
  assert.equal(extractPythonCode('```\nn = int(input())\nprint(n*n)\n```'), 'n = int(input())\nprint(n*n)\n');
  assert.equal(extractPythonCode('no code here'), null);
});

test('extractTestCase reads the Test Input / Test Output blocks (last of each)', () => {
  const text = 'Here:\n**Test Input:**\n```\n3\n1 2 3\n```\n**Test Output:**\n```\n6\n```';
  assert.deepEqual(extractTestCase(text), { input: '3\n1 2 3\n', output: '6\n' });
  assert.deepEqual(extractTestCase('Test Input:\n```text\n5\n```\nTest Output:\n```\n25\n```'), { input: '5\n', output: '25\n' });
  assert.equal(extractTestCase('**Test Input:**\n```\n3\n```'), null);
});

test('extractHashAnswer: the text after the last ####, first line, trimmed', () => {
  assert.equal(extractHashAnswer('work #### 3\nso\n#### \\frac{1}{2} \nextra'), '\\frac{1}{2}');
  assert.equal(extractHashAnswer('#### '), null);
  assert.equal(extractHashAnswer('42'), null);
});
