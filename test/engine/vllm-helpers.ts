// Shared by the tests that start a real vLLM server (test/engine/*vllm*.test.ts): whether vLLM is
// installed, and what to do when it is not. CI installs it (.ci/run: setup.sh --vllm), so there a
// missing interpreter is a failing test, not a skip: a broken install must not pass unseen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { defaultVllmPython } from '../../src/engine/vllm/server.ts';

export const vllmPython = defaultVllmPython();
const missing = !existsSync(vllmPython);

/** A skip reason for a test that starts vLLM: not installed, or the fast suite (MARFT_LONG_TESTS=0). */
export const skipWithoutVllm: string | false = missing ? `no ${vllmPython}: bash scripts/setup.sh --vllm installs vLLM (CPU) for this test`
  : process.env.MARFT_LONG_TESTS === '0' ? 'long test (MARFT_LONG_TESTS=0): starting vLLM takes about half a minute' : false;

if (missing && process.env.CI === 'true') {
  test('vLLM is installed (CI runs bash scripts/setup.sh --vllm)', () => assert.fail(`${vllmPython} is missing: CI must install vLLM so that this file's tests run`));
}
