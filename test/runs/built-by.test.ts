// A saved base records the code that built it (src/runs/base-folder.ts, src/core/code-version.ts):
// built-by.json is written inside the atomic save, covered by the manifest, and a task's cache that
// reuses a base built by another commit (or by code from before bases recorded one) says so in one
// notice per folder, instead of passing it off as what this code would pretrain.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { codeVersion, describeCodeVersion } from '../../src/core/code-version.ts';
import { createEngine } from '../../src/engine/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import { BUILT_BY, builtBy, builtByNote, cachedBase, claimSavedBase, saveBaseAtomic } from '../../src/runs/base-folder.ts';
import { writeManifest } from '../../src/runs/manifest.ts';
import { demoModelConfig } from '../../src/tasks/arith-duo/model-config.ts';
import { demoTokenizer } from '../../src/tasks/arith-duo/vocab.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-built-by-'));
after(() => rmSync(root, { recursive: true, force: true }));
const tiny = (): Engine => createEngine(demoModelConfig(demoTokenizer()), { seed: 1 });
const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

test('codeVersion: package.json\'s version, and in a git checkout its 40-hex commit', () => {
  const v = codeVersion();
  assert.equal(v.version, version);
  if (existsSync(new URL('../../.git', import.meta.url))) assert.match(v.commit ?? '', /^[0-9a-f]{40}$/);
  assert.equal(v.commit === null, v.dirty === null);
  assert.equal(describeCodeVersion({ version: '1.2.3', commit: 'ab'.repeat(20), dirty: true }), `1.2.3 at ${'ab'.repeat(6)} (with uncommitted changes)`);
  assert.equal(describeCodeVersion({ version: '1.2.3', commit: null, dirty: null }), '1.2.3 (no git commit known)');
});

test('saveBaseAtomic writes built-by.json inside the manifest; the same commit gives no note, another commit one naming both', async () => {
  const dir = join(root, 'saved');
  const engine = tiny();
  await saveBaseAtomic(engine, dir);
  await engine.dispose();
  const record = JSON.parse(readFileSync(join(dir, BUILT_BY), 'utf8')) as Record<string, unknown>;
  assert.equal(record.format, 'marft-built-by');
  assert.equal(record.version, 1);
  assert.ok(!Number.isNaN(Date.parse(record.createdAt as string)));
  assert.deepEqual(record.code, codeVersion());
  assert.equal(await claimSavedBase(dir), 'intact', 'the manifest covers it');
  assert.deepEqual(await builtBy(dir), codeVersion());
  const stored = codeVersion();
  const same = { ...stored, commit: stored.commit ?? 'c'.repeat(40) };
  const other = { version: '9.9.9', commit: 'd'.repeat(40), dirty: false };
  if (stored.commit !== null) assert.equal(await builtByNote(dir, same), null);
  const note = await builtByNote(dir, other);
  assert.ok(note !== null && note.includes(`was built by marft ${describeCodeVersion(stored)}; this is 9.9.9 at dddddddddddd`), note ?? 'null');
  assert.match(note, /delete the folder to pretrain it with this code/);
  // Editing the record breaks the manifest like any other file: the folder is no longer intact.
  writeFileSync(join(dir, BUILT_BY), '{}');
  assert.notEqual(await claimSavedBase(dir), 'intact');
});

test('a base without the record (saved before bases kept one) and one from a newer marft: a note each, the base still used', async () => {
  const dir = join(root, 'old');
  const engine = tiny();
  await saveBaseAtomic(engine, dir);
  await engine.dispose();
  unlinkSync(join(dir, BUILT_BY));
  await writeManifest(dir);
  assert.equal(await builtBy(dir), null);
  assert.match((await builtByNote(dir)) ?? '', /records no code version \(saved before bases recorded one\); it is reused as it is/);
  writeFileSync(join(dir, BUILT_BY), JSON.stringify({ format: 'marft-built-by', version: 5, code: codeVersion() }));
  assert.match((await builtByNote(dir)) ?? '', /was written by a newer marft \(marft-built-by version 5; this marft reads up to version 1\); upgrade marft to use it$/);
});

test('cachedBase: builds and saves once, then loads; a base from other code is noted once per folder', async () => {
  let builds = 0;
  const notes: string[] = [];
  const build = async () => {
    builds++;
    return tiny();
  };
  const notice = (m: string) => notes.push(m);
  // Built here, then loaded: this code's own base, nothing to say (where the commit is known).
  const own = join(root, 'cache', 'own');
  for (let k = 0; k < 3; k++) await (await cachedBase(own, build, notice)).dispose();
  assert.equal(builds, 1);
  if (codeVersion().commit !== null) assert.deepEqual(notes, []);
  notes.length = 0;
  // A base saved before bases recorded their code: reused as it is, with one note however often it is loaded.
  const old = join(root, 'cache', 'old');
  await (await cachedBase(old, build, notice)).dispose();
  assert.equal(builds, 2);
  unlinkSync(join(old, BUILT_BY));
  await writeManifest(old);
  for (let k = 0; k < 3; k++) await (await cachedBase(old, build, notice)).dispose();
  assert.equal(builds, 2, 'an intact base is reused, whatever built it');
  assert.equal(notes.length, 1, notes.join('\n'));
  assert.match(notes[0]!, /^the cached base .*old records no code version/);
});
