// scripts/eval-arith-pair-teacher.ts, the arith-pair teacher playing its system itself: on a tiny
// teacher, one JSON line whose score is the mean of its per-seed scores over the problems asked for,
// the teacher cached where the configuration says; another task refused in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'scripts/eval-arith-pair-teacher.ts');

test('the teacher of a tiny arith-pair configuration, scored on 3 problems under 2 decoding seeds', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-teacher-eval-'));
  try {
    const config = join(dir, 'pair.yaml');
    writeFileSync(config, `task: { name: arith-pair, options: { teacherSteps: 3, baseSeed: 0, baseCache: ${join(dir, 'cache')} } }\neval: { protocol: mas-opd, problems: 3, seeds: 2 }\n`);
    const run = spawnSync(process.execPath, ['--import', 'tsx', script, config], { cwd: root, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.equal(lines.length, 1, 'one JSON line on stdout');
    const r = JSON.parse(lines[0]!) as { system: string; score: number; perSeed: number[]; problems: number; protocol: string };
    assert.equal(r.system, 'teacher playing reasoner, tool_user');
    assert.equal(r.problems, 3);
    assert.equal(r.perSeed.length, 2);
    for (const s of r.perSeed) assert.ok([0, 1 / 3, 2 / 3, 1].some((v) => Math.abs(v - s) < 1e-12), `a per-seed score over 3 problems, got ${s}`);
    assert.ok(Math.abs(r.score - (r.perSeed[0]! + r.perSeed[1]!) / 2) < 1e-12);
    assert.equal(r.protocol, 'mas-opd');
    assert.deepEqual(readdirSync(join(dir, 'cache')).filter((f) => f.startsWith('arith-pair-teacher-')).length, 1, 'the teacher is kept in the configuration\'s baseCache');

    const other = join(dir, 'code.yaml');
    writeFileSync(other, 'task: { name: code-pair }\n');
    const refused = spawnSync(process.execPath, ['--import', 'tsx', script, other], { cwd: root, encoding: 'utf8' });
    assert.equal(refused.status, 2);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.match(refused.stderr, /task\.name is 'code-pair'; this script scores the arith-pair task's teacher/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
