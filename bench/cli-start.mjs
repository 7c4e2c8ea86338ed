#!/usr/bin/env node
// How long `marft --help` takes: the built package (dist/, scripts/build-dist.mjs) against its peer
// in the same run, the TypeScript sources through tsx (MARFT_FROM_SOURCE=1), and a bare `node -e 0`
// as the floor, interleaved so that a change in the machine's load hits all three alike.
//   node bench/cli-start.mjs [--runs N]        (default 10; dist/ must be built and current)
// Ends with one JSON line: medians and minima in seconds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = process.argv.indexOf('--runs');
const runs = at > 0 ? Number(process.argv[at + 1]) : 10;
if (!existsSync(`${root}dist/BUILT`)) {
  console.error('bench/cli-start: dist/ is not built (npm run build)');
  process.exit(2);
}

const variants = {
  dist: { args: ['bin/marft.mjs', '--help'], env: {} },
  tsx: { args: ['bin/marft.mjs', '--help'], env: { MARFT_FROM_SOURCE: '1' } },
  node: { args: ['-e', '0'], env: {} },
};

/** Wall seconds of one run; the variant must succeed (and dist must print the same help as tsx). */
function once(name) {
  const v = variants[name];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, v.args, { cwd: root, env: { ...process.env, ...v.env }, encoding: 'utf8' });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${name}: exit ${r.status}: ${r.stderr}`);
  return { seconds, stdout: r.stdout };
}

const help = { dist: once('dist').stdout, tsx: once('tsx').stdout };
if (help.dist !== help.tsx) throw new Error('dist/ and the sources print different help: rebuild dist/');
const times = { dist: [], tsx: [], node: [] };
for (let i = 0; i < runs; i++) for (const name of Object.keys(variants)) times[name].push(once(name).seconds);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x) => Math.round(x * 1000) / 1000;
for (const [name, xs] of Object.entries(times)) console.error(`${name.padEnd(5)} median ${median(xs).toFixed(3)} s  min ${Math.min(...xs).toFixed(3)} s  (${xs.map((x) => x.toFixed(2)).join(' ')})`);
console.log(JSON.stringify({
  bench: 'cli-start', runs,
  dist_median_s: round(median(times.dist)), dist_min_s: round(Math.min(...times.dist)),
  tsx_median_s: round(median(times.tsx)), tsx_min_s: round(Math.min(...times.tsx)),
  node_median_s: round(median(times.node)),
  speedup: round(median(times.tsx) / median(times.dist)),
}));
