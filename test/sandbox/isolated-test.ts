// Tests that need the sandbox's full isolation (PID/network/mount namespaces, the memory cgroup).
// Where this machine cannot provide it they are skipped with the reason; in CI (CI=true) they
// fail instead: CI must provide that isolation, and a skipped isolation test would prove nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isolationMode, memoryCgroupBase } from '../../src/sandbox/index.ts';

/** Why namespaces are unavailable here, or false. */
export const noNamespaces: string | false = isolationMode() === 'namespaces' ? false : 'needs namespace isolation (root on Linux)';

/** Why namespaces or a writable memory cgroup are unavailable here, or false. */
export const noMemoryCgroup: string | false = noNamespaces || (memoryCgroupBase() ? false : 'needs a writable cgroup v1 memory controller');

/** A test that runs when `missing` is false, is skipped with that reason elsewhere, and fails in CI. */
export function isolatedTest(name: string, missing: string | false, fn: () => void | Promise<void>): void {
  if (missing === false) test(name, fn);
  else if (process.env.CI === 'true') test(name, () => assert.fail(`${missing}: CI must provide it`));
  else test(name, { skip: missing }, fn);
}
