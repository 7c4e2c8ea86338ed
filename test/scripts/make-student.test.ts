// scripts/make-student.ts, the MAS-OPD student for a real teacher: which layers it keeps, that a
// student keeping every layer is the teacher, and the whole script on a tiny teacher (its episodes,
// the fit, a folder that loads with the teacher's tokenizer and says how it was made).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keptLayers, subsetModel } from '../../scripts/make-student.ts';
import { loadBaseDir } from '../../src/engine/embedded/engine-io.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('keptLayers: the first k − 2 and the last 2; fewer than 3: the first k; out of range refused', () => {
  assert.deepEqual(keptLayers(30, 6), [0, 1, 2, 3, 28, 29]);
  assert.deepEqual(keptLayers(4, 3), [0, 2, 3]);
  assert.deepEqual(keptLayers(4, 2), [0, 1]);
  assert.deepEqual(keptLayers(4, 4), [0, 1, 2, 3]);
  assert.throws(() => keptLayers(4, 5), /--layers: expected a whole number in \[1, 4\], got 5/);
  assert.throws(() => keptLayers(4, 0), /--layers/);
});

test('make-student on a tiny teacher: a 3-layer student of a 4-layer teacher, fitted, saved with the tokenizer', { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-student-'));
  try {
    const teacher = join(dir, 'teacher');
    execFileSync(process.execPath, ['--import', 'tsx', join(root, 'scripts/make-tiny-model.ts'), '--out', teacher, '--hidden-size', '32', '--layers', '4', '--seed', '5'], { cwd: root });
    // Every layer kept: the teacher's log-probs exactly (the same weights, the same arithmetic).
    const t = loadBaseDir(teacher);
    const whole = subsetModel(t.config, t.weights, [0, 1, 2, 3]);
    const batch = [{ tokens: [3, 4, 5, 6, 7], scoreFrom: 1 }];
    const a = await new EmbeddedEngine(t.config, t.weights).forward({ kind: 'base' }, batch, {});
    const b = await new EmbeddedEngine(whole.config, whole.weights).forward({ kind: 'base' }, batch, {});
    assert.deepEqual([...b.logprobs![0]!], [...a.logprobs![0]!]);

    const config = join(dir, 'config.yaml');
    writeFileSync(config, [
      'algorithm: mas-opd', 'task:', '  name: workflow', '  options: { dataset: gsm8k, heldOutFraction: 0.5, workflow: duo, maxProblemTokens: 200 }',
      `teacher: { path: ${teacher} }`, 'rollout: { batchSize: 2, maxNewTokens: 6 }',
    ].join('\n'));
    const out = join(dir, 'student');
    const log = execFileSync(process.execPath, ['--import', 'tsx', join(root, 'scripts/make-student.ts'), '--teacher', teacher, '--config', config, '--out', out,
      '--layers', '3', '--episodes', '3', '--epochs', '1'], { cwd: root, encoding: 'utf8' });
    assert.match(log, /teacher episodes 3\/3/);
    const source = JSON.parse(readFileSync(join(out, 'source.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(source['layers_kept'], [0, 2, 3]);
    assert.equal(source['teacher_episodes'], 3);
    const replies = source['replies'] as number;
    assert.ok(replies >= 3 && replies <= 6, `two agents' non-empty replies in three episodes, got ${replies}`);
    assert.ok(Number.isFinite(source['loss_first']) && Number.isFinite(source['loss_last']));
    const s = loadBaseDir(out);
    assert.equal(s.config.numHiddenLayers, 3);
    assert.equal(s.config.vocabSize, t.config.vocabSize);
    assert.ok(existsSync(join(out, 'tokenizer.json')));
    // Fitted: the kept layers moved away from the teacher's (the fit trained every parameter).
    const moved = s.weights.layers[0]!.linears.q_proj!.data.some((v, i) => v !== t.weights.layers[0]!.linears.q_proj!.data[i]);
    assert.ok(moved);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
