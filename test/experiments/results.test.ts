// OUT/results.jsonl: a last line cut by a kill is dropped from the file (that evaluation runs
// again), so the next line appended starts on its own line; a damaged line elsewhere is one line.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { appendResult, readResults, type ExperimentResult } from '../../src/experiments/results.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-results-'));
after(() => rmSync(root, { recursive: true, force: true }));

const result = (seed: number): ExperimentResult => ({ row: 'r', seed, column: 'c', score: 0.5, perSeed: [0.5], problems: 4, step: 2, checkpoint: '/x' });

test('a missing file is no results; a cut last line is removed and the next append is whole', async () => {
  const file = join(root, 'results.jsonl');
  assert.deepEqual(await readResults(file), []);
  await appendResult(file, result(0));
  writeFileSync(file, `${readFileSync(file, 'utf8')}{"row":"r","seed":1,"col`);
  assert.deepEqual(await readResults(file), [result(0)]);
  assert.equal(readFileSync(file, 'utf8'), `${JSON.stringify({ ...result(0), version: 1 })}\n`);
  await appendResult(file, result(1));
  assert.deepEqual(await readResults(file), [result(0), result(1)]);
});

test('a damaged line before the last is one line naming it', async () => {
  const file = join(root, 'damaged.jsonl');
  writeFileSync(file, `${JSON.stringify(result(0))}\nnot json\n${JSON.stringify(result(1))}\n`);
  await assert.rejects(readResults(file), /damaged\.jsonl: line 2 is not JSON; remove it to evaluate that run again$/);
  writeFileSync(file, `${JSON.stringify({ row: 'r' })}\n`);
  await assert.rejects(readResults(file), /line 1 is not a result/);
});

test('each line carries its format version: a newer one is refused in one line, a line without one (older) is read', async () => {
  const file = join(root, 'versions.jsonl');
  await appendResult(file, result(0));
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).version, 1);
  writeFileSync(file, `${JSON.stringify(result(0))}\n${JSON.stringify({ ...result(1), version: 1 })}\n`);
  assert.deepEqual(await readResults(file), [result(0), result(1)]);
  writeFileSync(file, `${JSON.stringify(result(0))}\n${JSON.stringify({ ...result(1), version: 2 })}\n`);
  await assert.rejects(readResults(file), /^FormatVersionError: .*versions\.jsonl \(line 2\) was written by a newer marft \(marft-experiment-result version 2; this marft reads up to version 1\); upgrade marft to use it\. Nothing was changed$/);
  assert.equal(readFileSync(file, 'utf8').split('\n').length, 3, 'the file was changed');
});
