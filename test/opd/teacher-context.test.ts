// Teacher contexts as golden strings: the role line removed, the role condition in its place, the PAC
// verdict closing the input (none at t = 0), the two RAS contexts differing only in the condition,
// and the student's own input left unchanged. The role line of the built-in pair prompts is the role
// and its collaborator (opd.roleLine: role-sentences): left in, "You work with a Tool-User" would
// follow the contrasting condition "You are the Tool-User …" and tell the teacher the role anyway,
// so A_role would cancel (issue 19).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { teacherInputs } from '../../src/opd/teacher-estimator.ts';
import { DEFAULT_ROLE_CONDITIONS, conditionText, contrastRole, mergeRoleConditions } from '../../src/opd/role-conditions.ts';
import { splitRoleLine, teacherMessages } from '../../src/opd/teacher-context.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { reasonerToolUser, coderTester } from '../../src/workflow/index.ts';
import type { ChatMessage } from '../../src/tokenizer/types.ts';

const table = mergeRoleConditions({ conditions: { Reasoner: ['R1.', 'R2.'], 'Tool-User': ['T1.', 'T2.'] } }, DEFAULT_ROLE_CONDITIONS);
const student: ChatMessage[] = [
  { role: 'system', content: 'You are the Reasoner. End with #### and the answer.' },
  { role: 'user', content: 'Problem:\n2+3\n\nResult of the check:\nThe answers do not agree.' },
];
const verdict = 'Verification result for the previous turn:\n- Observation: X.\n- Conclusion: BOTH_CONSISTENT. Y.';

test('the role line: the role sentences, the first sentence, the first line, or the whole system message', () => {
  assert.deepEqual(splitRoleLine('You are the Coder. Write a program.', 'first-sentence'), { roleLine: 'You are the Coder.', rest: 'Write a program.' });
  assert.deepEqual(splitRoleLine('Coder\nWrite it. Now.', 'first-line'), { roleLine: 'Coder', rest: 'Write it. Now.' });
  assert.deepEqual(splitRoleLine('Reasoner', 'system-message'), { roleLine: 'Reasoner', rest: '' });
  assert.deepEqual(splitRoleLine('No full stop here', 'first-sentence'), { roleLine: 'No full stop here', rest: '' });
  // role-sentences: the first sentence, then each following "You …" sentence that names a role.
  assert.deepEqual(splitRoleLine('You are the Coder. You work with a Tester, who tests. You must be brief. Write it.', 'role-sentences'), { roleLine: 'You are the Coder. You work with a Tester, who tests.', rest: 'You must be brief. Write it.' });
  assert.deepEqual(splitRoleLine('You are the Solver. Follow the Planner\'s plan.', 'role-sentences'), { roleLine: 'You are the Solver.', rest: "Follow the Planner's plan." });
  assert.deepEqual(splitRoleLine('You are the Judge. You work with a Coder.', 'role-sentences', ['Judge']), { roleLine: 'You are the Judge.', rest: 'You work with a Coder.' }, 'only the names given count');
  assert.deepEqual(splitRoleLine('You are the Coder. You work with Coders.', 'role-sentences'), { roleLine: 'You are the Coder.', rest: 'You work with Coders.' }, 'a whole name only');
  assert.deepEqual(splitRoleLine('No full stop here', 'role-sentences'), { roleLine: 'No full stop here', rest: '' });
});

test('the built-in pair prompts: role-sentences takes the role and its collaborator, so the contrasting context names no role but the condition', () => {
  const prompts = Object.fromEntries([...reasonerToolUser().agents, ...coderTester().agents].map((a) => [a.role, a.systemPrompt]));
  const rest = (role: string) => splitRoleLine(prompts[role]!, 'role-sentences').rest;
  assert.ok(rest('Reasoner').startsWith('Solve the problem by step-by-step mathematical reasoning in words, without code.'), rest('Reasoner'));
  assert.ok(rest('Tool-User').startsWith('Write a Python program that computes the answer'), rest('Tool-User'));
  assert.ok(rest('Coder').startsWith('Write a complete Python program'), rest('Coder'));
  assert.ok(rest('Tester').startsWith('Do not write a solution.'), rest('Tester'));
  for (const role of ['Reasoner', 'Tool-User', 'Coder', 'Tester']) assert.doesNotMatch(rest(role), /Reasoner|Tool-User|Coder|Tester/, role);
  // The Reasoner's contrasting context (κ = Tool-User) with the defaults: the Tool-User's condition
  // and nothing that says "Tool-User" otherwise. With first-sentence (the earlier default) the
  // collaborator sentence stayed: "You are the Tool-User … You work with a Tool-User, who …".
  const reasoner: ChatMessage[] = [{ role: 'system', content: prompts.Reasoner! }, { role: 'user', content: 'Problem:\n2+3' }];
  const { contrast } = teacherInputs(reasoner, 'Reasoner', null, DEFAULT_ROLE_CONDITIONS, { lambda: 0.1, roleLine: 'role-sentences' });
  assert.equal(contrast![0]!.content, `${conditionText(DEFAULT_ROLE_CONDITIONS, 'Tool-User')}\n\n${rest('Reasoner')}`);
  const earlier = teacherInputs(reasoner, 'Reasoner', null, DEFAULT_ROLE_CONDITIONS, { lambda: 0.1, roleLine: 'first-sentence' });
  assert.ok(earlier.contrast![0]!.content.includes('You work with a Tool-User, who solves the same problem by writing a program.'));
});

test('teacher context at t = 0: condition in place of the role line, no verdict', () => {
  const before = structuredClone(student);
  const { own, contrast } = teacherInputs(student, 'Reasoner', null, table, { lambda: 0.1, roleLine: 'first-sentence' });
  const tok = new CharTokenizer();
  assert.equal(
    tok.renderChat(own, { addGenerationPrompt: true }),
    '<|system|>R1.\n\nR2.\n\nEnd with #### and the answer.<|end|><|user|>Problem:\n2+3\n\nResult of the check:\nThe answers do not agree.<|end|><|assistant|>',
  );
  assert.equal(
    tok.renderChat(contrast!, { addGenerationPrompt: true }),
    '<|system|>T1.\n\nT2.\n\nEnd with #### and the answer.<|end|><|user|>Problem:\n2+3\n\nResult of the check:\nThe answers do not agree.<|end|><|assistant|>',
  );
  assert.deepEqual(student, before, "the student's messages are not changed");
});

test('teacher context at t > 0: the verdict closes the input, the same in both RAS passes; the student input stays without it', () => {
  const before = structuredClone(student);
  const { own, contrast } = teacherInputs(student, 'Reasoner', verdict, table, { lambda: 0.1, roleLine: 'first-sentence' });
  assert.equal(own[1]!.content, `Problem:\n2+3\n\nResult of the check:\nThe answers do not agree.\n\n${verdict}`);
  assert.equal(contrast![1]!.content, own[1]!.content);
  // The two contexts differ only in the condition.
  assert.equal(own[0]!.content.replace('R1.\n\nR2.', 'C'), contrast![0]!.content.replace('T1.\n\nT2.', 'C'));
  assert.deepEqual(student, before);
  assert.ok(!JSON.stringify(student).includes('Verification result'));
  // λ = 0: no contrasting context.
  assert.equal(teacherInputs(student, 'Reasoner', verdict, table, { lambda: 0, roleLine: 'first-sentence' }).contrast, null);
});

test('the default table: every role has two paragraphs of matched length and a contrasting role with a condition', () => {
  for (const [role, c] of Object.entries(DEFAULT_ROLE_CONDITIONS.conditions)) {
    assert.match(c.paragraphs[0], new RegExp(`^You are the ${role} in a collaborative .* system, working together with a `));
    assert.match(c.paragraphs[1], /^Your role is centered on .* You should not take over the /);
    const other = contrastRole(DEFAULT_ROLE_CONDITIONS, role);
    assert.ok(conditionText(DEFAULT_ROLE_CONDITIONS, other).length > 0);
  }
  const lengths = Object.values(DEFAULT_ROLE_CONDITIONS.conditions).map((c) => c.paragraphs[0].length + c.paragraphs[1].length);
  assert.ok(Math.max(...lengths) / Math.min(...lengths) < 1.25, `condition lengths ${lengths.join(', ')}`);
  assert.equal(contrastRole(DEFAULT_ROLE_CONDITIONS, 'Coder'), 'Tester');
  assert.equal(contrastRole(DEFAULT_ROLE_CONDITIONS, 'Tool-User'), 'Reasoner');
});

test('a user table replaces conditions and κ; malformed tables and unknown roles are one-line errors', () => {
  const t = mergeRoleConditions({ conditions: { Judge: ['J1', 'J2'] }, contrast: { Judge: 'Coder' } }, DEFAULT_ROLE_CONDITIONS);
  assert.equal(conditionText(t, 'Judge'), 'J1\n\nJ2');
  assert.equal(contrastRole(t, 'Judge'), 'Coder');
  assert.throws(() => mergeRoleConditions({ conditions: { Judge: ['only one'] } }, DEFAULT_ROLE_CONDITIONS), /conditions.Judge must be a list of two non-empty paragraphs/);
  assert.throws(() => mergeRoleConditions({ extra: 1 }, DEFAULT_ROLE_CONDITIONS), /unknown key 'extra'/);
  assert.throws(() => conditionText(DEFAULT_ROLE_CONDITIONS, 'Nobody'), { name: 'ConfigError', message: /no role condition for role 'Nobody'/ });
  assert.throws(() => teacherMessages([{ role: 'user', content: 'x' }], 'C', null, 'first-sentence'), /no system message/);
});
