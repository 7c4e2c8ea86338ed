// marft as a built package (issue 21, item 7): scripts/build-dist.mjs compiles src/ into a package of
// this test's own (the repository's dist/ is left alone: other tests' marft processes may be
// running from it); there, with no TypeScript loader anywhere, `import { ... } from 'marft'` works
// and trains, its types check in a consumer's TypeScript, the CLI runs from dist/ (maths judging and
// the engine's pool threads start their worker entries from dist/ too), and a source newer than
// the build sends bin/marft.mjs back to the sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
/** About a minute on 2 shared cores (tsc over src/, then a consumer's typecheck): skipped in the fast suite. */
const long = process.env.MARFT_LONG_TESTS === '0';

test('the built package: import from \'marft\' without tsx, its types, the CLI and its workers from dist/', { skip: long, timeout: 600_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'marft-package-'));
  try {
    // The package: package.json, bin/, schema/ copied; src/, data/, node_modules linked; dist/ built here.
    const pkg = join(root, 'marft');
    mkdirSync(pkg);
    for (const f of ['package.json', 'bin', 'schema', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(repo, f), join(pkg, f), { recursive: true });
    for (const d of ['src', 'data', 'node_modules', 'examples']) symlinkSync(join(repo, d), join(pkg, d));
    const build = spawnSync(process.execPath, [join(repo, 'scripts/build-dist.mjs'), '--out', join(pkg, 'dist')], { cwd: repo, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);

    // A consumer with marft in its node_modules (as `npm install marft` would leave it).
    const app = join(root, 'app');
    mkdirSync(join(app, 'node_modules'), { recursive: true });
    symlinkSync(pkg, join(app, 'node_modules', 'marft'));
    writeFileSync(join(app, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(app, 'use.mjs'), `
import { train, parseConfig, buildRun, loadEngine, configJsonSchema, marftVersion, workflow, runCli } from 'marft';
import schema from 'marft/schema' with { type: 'json' };
const config = parseConfig({ task: { name: 'coordination-game', options: { symbols: 4 } }, model: { engine: 'tabular' },
  actor: { klCoef: 0, optim: { lr: 0.1 } }, critic: { optim: { lr: 0.1 } }, rollout: { batchSize: 16, maxNewTokens: 1 },
  train: { steps: 3, checkpointEvery: 3 }, eval: { seeds: 1 }, log: { to: [] } });
const runDir = process.argv[2];
const { engine, bundle } = await buildRun(config, runDir);
const result = await train({ config, engine, task: bundle.task, runDir });
await engine.dispose();
console.log(JSON.stringify({
  resolved: import.meta.resolve('marft'), steps: result.metrics.length, before: result.evalBefore?.step, after: result.evalAfter?.step,
  loadEngine: typeof loadEngine, sameSchema: JSON.stringify(schema) === JSON.stringify(configJsonSchema()), version: marftVersion(),
  workflow: typeof workflow.rollout, runCli: typeof runCli,
}));
`);
    // Plain node, no loader: a module of dist/ that still imported a .ts file would fail to load.
    const used = spawnSync(process.execPath, ['use.mjs', join(root, 'run')], { cwd: app, encoding: 'utf8' });
    assert.equal(used.status, 0, used.stderr);
    const out = JSON.parse(used.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
    assert.deepEqual(out, { resolved: `file://${join(pkg, 'dist', 'index.js')}`, steps: 3, before: 0, after: 3, loadEngine: 'function', sameSchema: true, version, workflow: 'function', runCli: 'function' });

    // Its types, as a consumer's TypeScript (NodeNext) sees them through "exports" and "types".
    writeFileSync(join(app, 'use.ts'), `
import { parseConfig, train, type MarftConfig, type TrainResult, type Tracker } from 'marft';
const config: MarftConfig = parseConfig({ task: { name: 'bandit' } });
const steps: number = config.train.steps;
const tracker: Tracker | null = null;
export async function run(r: Promise<TrainResult>): Promise<number | null> { return (await r).evalAfter?.score ?? steps + (tracker ? 1 : 0); }
export const t = train;
// @ts-expect-error: a key the configuration does not have
export const wrong: number = config.train.stepz;
`);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['use.ts'] }));
    const tsc = spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app, encoding: 'utf8' });
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);

    // The CLI from dist/: maths judging (a worker thread) and an embedded-engine run (the pool's threads).
    const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [join(pkg, 'bin/marft.mjs'), ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, ...env } });
    writeFileSync(join(root, 'math.jsonl'), '{"id": "a", "gold": "1/2", "pred": "0.5"}\n');
    const math = cli(['verify', 'math', '--input', join(root, 'math.jsonl')]);
    assert.equal(math.status, 0, math.stderr);
    assert.equal(JSON.parse(math.stdout.trim()).equal, true);
    const embedded = cli(['train', join(repo, 'examples/coordination-embedded.yaml'), '--run-dir', join(root, 'embedded'), '--set', 'train.steps=1', '--set', 'eval.seeds=1', '--set', 'eval.problems=4', '--no-progress'], { MARFT_THREADS: '2' });
    assert.equal(embedded.status, 0, embedded.stderr);
    // A pool worker that cannot start is not fatal (OpenBLAS's threads take over, with this notice).
    assert.doesNotMatch(embedded.stderr, /worker threads stopped/);
    assert.equal(JSON.parse(embedded.stdout.trim().split('\n').pop()!).steps, 1);

    // dist/ runs only while it is current: a source newer than its BUILT stamp sends bin/ to tsx,
    // seen here as a dist/ module broken on purpose that then no longer runs.
    writeFileSync(join(pkg, 'dist', 'cli', 'main.js'), 'throw new Error("dist/ ran");\n');
    assert.match(cli(['--version']).stderr, /dist\/ ran/);
    utimesSync(join(pkg, 'dist', 'BUILT'), 0, 0);
    const fromSource = cli(['--version']);
    assert.deepEqual([fromSource.status, fromSource.stdout.trim()], [0, version]);
    assert.equal(cli(['--version'], { MARFT_FROM_SOURCE: '1' }).status, 0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
