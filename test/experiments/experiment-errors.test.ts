// A bad experiment file is one line naming the key, the row or the row × column, before anything
// runs (no run folder, no results): unknown keys, a missing configuration, a row × column whose
// configuration does not load, duplicate names, a misspelt benchmark, an unknown --rows name.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertUserError, runInProcess } from '../cli/spawn-cli.ts';

const COORD = fileURLToPath(new URL('../../examples/coordination-embedded.yaml', import.meta.url));
const GSM8K = fileURLToPath(new URL('../../examples/gsm8k-duo.yaml', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'marft-experiment-errors-'));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** Writes an experiment file and runs `marft experiment` on it (in this process), with an --out that must stay empty. */
async function experiment(text: string, extra: string[] = []) {
  const file = join(root, `e${n++}.yaml`);
  writeFileSync(file, text);
  const out = join(root, `out${n}`);
  const r = await runInProcess(['experiment', file, '--out', out, ...extra]);
  assert.equal(existsSync(out), false, 'nothing was written before the file was found bad');
  return r;
}

const row = (name: string, config = COORD, rest = ''): string => `  - { name: ${name}, config: ${config}${rest} }\n`;
const cols = 'columns:\n  - { name: c }\n';

test('unknown keys, at the top, in a row and in a column, name the key and the allowed ones', async () => {
  assertUserError(await experiment(`name: e\nrow: []\nrows:\n${row('a')}${cols}`), /: row: unknown key; allowed keys: name, rows, columns, seeds, set, quick$/, 'top');
  assertUserError(await experiment(`name: e\nrows:\n${row('a', COORD, ', sets: {}')}${cols}`), /rows\[0\]\.sets: unknown key; allowed keys of rows\[0\]: name, config, set, base, seeds$/, 'row');
  assertUserError(await experiment(`name: e\nrows:\n${row('a')}columns:\n  - { name: c, base: true }\n`), /columns\[0\]\.base: unknown key/, 'column');
  assertUserError(await experiment(`name: e\nrows:\n${row('a', COORD, ', set: { train.stepz: 2 }')}${cols}`), /row a: --set train\.stepz=2: train\.stepz: unknown key; allowed keys of train: /, 'configuration key');
});

test('a missing configuration, duplicate names, bad seeds and a missing file are one line', async () => {
  assertUserError(await experiment(`name: e\nrows:\n${row('a', join(root, 'nope.yaml'))}${cols}`), /row a: .*nope\.yaml.*: no such file$/, 'missing config');
  assertUserError(await experiment(`name: e\nrows:\n${row('a')}${row('a')}${cols}`), /rows: the name 'a' is used twice$/, 'duplicate rows');
  assertUserError(await experiment(`name: e\nrows:\n${row('a')}columns:\n  - { name: c }\n  - { name: c }\n`), /columns: the name 'c' is used twice$/, 'duplicate columns');
  assertUserError(await experiment(`name: e\nseeds: [0, -1]\nrows:\n${row('a')}${cols}`), /seeds: -1 is not a seed/, 'seed');
  assertUserError(await experiment(`name: e\nrows:\n${row('../a')}${cols}`), /rows\[0\]\.name: '\.\.\/a' is not a usable name/, 'folder name');
  // A syntax error is its one line and, under it, the code frame (test/cli/guidance.test.ts).
  const yaml = await experiment(`name: e\nrows: [\n`);
  assert.equal(yaml.status, 2);
  assert.match(yaml.stderr.split('\n')[0]!, /e\d+\.yaml:\d+:\d+: not valid YAML: /);
  assert.match(yaml.stderr, /\n> +\d+ \| /);
  assertUserError(await runInProcess(['experiment', join(root, 'absent.yaml')]), /absent\.yaml: no such file$/, 'no file');
});

test('a row × column that does not load names both, and the key', async () => {
  assertUserError(await experiment(`name: e\nrows:\n${row('a')}${row('b')}columns:\n  - { name: ok }\n  - { name: bad, set: { eval.seeds: 0 } }\n`), /row a × column bad: .*eval\.seeds/, 'eval.seeds 0');
  // A misspelt benchmark key and an unknown benchmark, found before any training.
  assertUserError(await experiment(`name: e\nrows:\n${row('duo', GSM8K)}columns:\n  - { name: m, set: { task.options.heldOutDatset: math500 } }\n`), /row duo × column m: .*heldOutDatset/, 'misspelt key');
  assertUserError(await experiment(`name: e\nrows:\n${row('duo', GSM8K)}columns:\n  - { name: m, set: { task.options.heldOutDataset: math5000 } }\n`), /row duo × column m: task\.options\.heldOutDataset: unknown dataset 'math5000'/, 'unknown dataset');
  assertUserError(await experiment(`name: e\nrows:\n${row('duo', GSM8K)}columns:\n  - { name: m, set: { task.options.heldOutDataset: mbpp } }\n`), /row duo × column m: task\.options\.heldOutDataset: a code dataset cannot evaluate a task trained on math problems/, 'other domain');
});

test('--rows names an unknown row, --seeds a seed no row has, and --dry-run with --table, in one line', async () => {
  assertUserError(await experiment(`name: e\nrows:\n${row('a')}${cols}`, ['--rows', 'a,z']), /--rows: no row named 'z' \(rows: a\)$/, 'rows');
  assertUserError(await experiment(`name: e\nrows:\n${row('a')}${cols}`, ['--dry-run', '--table']), /--dry-run and --table/, 'flags');
  assertUserError(await experiment(`name: e\nseeds: [0, 1]\nrows:\n${row('a')}${cols}`, ['--seeds', '0,7']), /--seeds: no row has seed 7 \(seeds: 0, 1\)$/, 'unknown seed');
  assertUserError(await experiment(`name: e\nseeds: [0, 1]\nrows:\n${row('a')}${cols}`, ['--seeds', 'one']), /--seeds: got 'one', expected training seeds as integers >= 0/, 'not a seed');
});
