// The versioned adapter names of the vLLM sampler (src/engine/vllm/adapter-versions.ts), without a
// server: a replaced version is unloaded at once when idle, and only after its last request when not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AdapterVersions } from '../../src/engine/vllm/adapter-versions.ts';

test('adapter versions: names advance; an idle old version is unloaded at publish', async () => {
  const unloads: string[] = [];
  const v = new AdapterVersions(async (s) => { unloads.push(s); });
  assert.equal(v.nextVersion('p'), 0);
  await v.publish('p', 0);
  assert.equal(v.nextVersion('p'), 1);
  await v.publish('p', 1);
  assert.deepEqual(unloads, ['p-v0']);
  assert.deepEqual(v.served(), ['p-v1']);
  assert.throws(() => v.acquire('q'), /adapter 'q' is not served/);
});

test('adapter versions: a version in use is unloaded only when its last request is released', async () => {
  const unloads: string[] = [];
  const v = new AdapterVersions(async (s) => { unloads.push(s); });
  await v.publish('p', 0);
  const a = v.acquire('p'), b = v.acquire('p');
  assert.equal(a, 'p-v0');
  assert.equal(v.requests('p-v0'), 2);
  await v.publish('p', 1);
  assert.equal(v.acquire('p'), 'p-v1', 'new requests go to the new version at once');
  assert.deepEqual(unloads, []);
  assert.deepEqual(v.served().sort(), ['p-v0', 'p-v1']);
  await v.release(a);
  assert.deepEqual(unloads, []);
  await v.release(b);
  assert.deepEqual(unloads, ['p-v0']);
  assert.deepEqual(v.unloaded, ['p-v0']);
  await v.release('p-v1');
  assert.deepEqual(unloads, ['p-v0'], 'the current version stays loaded when idle');
  await v.remove('p');
  assert.deepEqual(unloads, ['p-v0', 'p-v1']);
  assert.deepEqual(v.served(), []);
});
