// Where namespaces are unavailable (not root, no unshare, MARFT_SANDBOX_ISOLATION=rlimits), runs
// fall back to resource limits and a process group, and say so once on stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

test('the rlimits fallback still judges programs and warns exactly once', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', resolve('test/sandbox/fixtures/degraded-runner.ts')], {
    encoding: 'utf8',
    env: { ...process.env, MARFT_SANDBOX_ISOLATION: 'rlimits' },
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout) as { mode: string; outcomes: Array<{ status: string; stdout: string }>; uid: number; forks: number; leftovers: number };
  assert.equal(result.mode, 'rlimits');
  assert.deepEqual(result.outcomes.map((o) => o.status), ['ok', 'timeout', 'output_limit', 'memory']);
  assert.equal(result.outcomes[0]!.stdout, 'cba\n');
  if (process.getuid?.() === 0) {
    assert.ok(result.uid >= 200_000, `ran as uid ${result.uid}`);
    assert.ok(result.forks >= 1 && result.forks <= 7, `forked ${result.forks} children under a limit of 8 processes`);
    assert.equal(result.leftovers, 0, 'a setsid() child outlived its run');
  }
  assert.equal(r.stderr.match(/marft sandbox: MARFT_SANDBOX_ISOLATION=rlimits; running programs /g)?.length, 1);
});
