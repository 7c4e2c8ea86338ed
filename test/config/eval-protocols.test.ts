// eval.protocol (src/config/eval-protocols.ts): a named protocol supplies the eval keys a
// configuration leaves out, refuses a decoding key written otherwise in one line, and leaves
// eval.seeds and eval.problems to the configuration; custom changes nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig, parseConfig } from '../../src/config/load.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-protocols-'));
after(() => rmSync(root, { recursive: true, force: true }));

const evalOf = (section: Record<string, unknown>) => parseConfig({ task: { name: 'bandit' }, eval: section }).eval;

test('marft and mas-opd fill the decoding and 5 seeds; custom (the default) keeps the schema defaults', () => {
  assert.deepEqual(evalOf({ protocol: 'marft' }), { protocol: 'marft', temperature: 0.6, topP: 1, topK: 0, seeds: 5, problems: 0 });
  assert.deepEqual(evalOf({ protocol: 'mas-opd' }), { protocol: 'mas-opd', temperature: 0.6, topP: 0.95, topK: 20, seeds: 5, problems: 0 });
  assert.deepEqual(evalOf({}), { protocol: 'custom', temperature: 0.6, topP: 1, topK: 0, seeds: 5, problems: 0 });
  assert.deepEqual(evalOf({ topP: 0.5, topK: 3, temperature: 1 }), { protocol: 'custom', temperature: 1, topP: 0.5, topK: 3, seeds: 5, problems: 0 });
});

test('seeds and problems stay free under a protocol; a decoding key equal to the protocol\'s is accepted', () => {
  assert.deepEqual(evalOf({ protocol: 'mas-opd', seeds: 16, problems: 30, topK: 20 }), { protocol: 'mas-opd', temperature: 0.6, topP: 0.95, topK: 20, seeds: 16, problems: 30 });
});

test('a decoding key that contradicts the protocol is one line naming the key, the protocol and the way out', () => {
  assert.throws(() => evalOf({ protocol: 'mas-opd', topP: 1 }), /^ConfigError: eval\.topP: got 1, but eval\.protocol mas-opd decodes at topP 0\.95 \(MAS-OPD: .*\); remove eval\.topP, or set eval\.protocol: custom$/);
  assert.throws(() => evalOf({ protocol: 'marft', temperature: 1 }), /eval\.temperature: got 1, but eval\.protocol marft decodes at temperature 0\.6/);
  // An unknown protocol or a malformed value is the schema's to report.
  assert.throws(() => evalOf({ protocol: 'paper' }), /eval\.protocol: got "paper", expected one of 'custom', 'marft', 'mas-opd'/);
  assert.throws(() => evalOf({ protocol: 'marft', topP: 'high' }), /eval\.topP: got "high", expected a number in \(0, 1\]/);
});

test('from a file with --set: the protocol may come from the command line, and the file is named in the error', async () => {
  const file = join(root, 'run.yaml');
  writeFileSync(file, 'task: { name: bandit }\neval: { topP: 1.0, seeds: 2 }\n');
  const c = await loadConfig(file, ['eval.protocol=marft']);
  assert.deepEqual([c.eval.protocol, c.eval.topP, c.eval.seeds], ['marft', 1, 2]);
  await assert.rejects(loadConfig(file, ['eval.protocol=mas-opd']), (err: Error) => err.message.startsWith(`${file} (with --set): eval.topP: got 1, but eval.protocol mas-opd`));
  // A validated configuration (a checkpoint's) validates again to itself.
  const masOpd = parseConfig({ task: { name: 'bandit' }, eval: { protocol: 'mas-opd' } });
  assert.deepEqual(parseConfig(JSON.parse(JSON.stringify(masOpd))), masOpd);
});
