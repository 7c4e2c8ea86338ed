#!/usr/bin/env node
// Runs the whole test suite with node's test runner (TypeScript through tsx).
//   node scripts/test.mjs            all tests, long learning tests included (what CI runs)
//   node scripts/test.mjs --fast     skips the long tests (they check MARFT_LONG_TESTS)
//   node scripts/test.mjs FILE...    only these files
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const fast = args.includes('--fast');
const explicit = args.filter((a) => !a.startsWith('--'));

function collect(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = explicit.length ? explicit : [...collect('src', []), ...collect('test', [])].sort();
const env = { ...process.env, MARFT_LONG_TESTS: fast ? '0' : (process.env.MARFT_LONG_TESTS ?? '1') };
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
