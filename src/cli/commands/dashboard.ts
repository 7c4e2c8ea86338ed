// `marft dashboard RUN_DIR... [--port N]`: a local web page of runs' curves and sampled episodes,
// updated while they train (src/dashboard/).
import { existsSync, statSync } from 'node:fs';
import { parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { startDashboard } from '../../dashboard/server.ts';
import { discoverRuns } from '../../dashboard/run-sources.ts';


export const DEFAULT_PORT = 8377;

const HELP = `usage: marft dashboard RUN_DIR... [--port N]

Serves a web page on http://127.0.0.1:N/ (default port ${DEFAULT_PORT}; --port 0 takes any free one)
that shows, and updates while the runs train (it polls every 2 s):
  - curves of every numeric key of each run's metrics.jsonl, grouped per agent and role (reward/<agent>,
    explained_variance/pos<i>, a_opd_<role>, ...), several runs side by side in each chart;
  - a trajectory viewer: pick a run, a step and an episode from RUN/samples/ and read each agent's
    turns, every generated token coloured by its advantage, teacher gap or importance ratio; click a
    token for its id, text, log-prob and those numbers.
A RUN_DIR is a run folder, an experiment's OUT folder (its rows OUT/runs/<row>/seed-<s>) or any folder
holding run folders (searched 5 levels down). Stop it with Ctrl-C. docs/dashboard.md has the details.`;

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['port'] });
  const dirs = parsed.positionals;
  if (dirs.length === 0) throw new UserError('expected at least one RUN_DIR (see --help)');
  for (const d of dirs) {
    if (!existsSync(d)) throw new UserError(`${d}: no such folder`);
    if (!statSync(d).isDirectory()) throw new UserError(`${d} is a file; the dashboard takes run folders (marft show reads a samples file)`);
  }
  const portText = stringFlag(parsed, 'port');
  const port = portText === undefined ? DEFAULT_PORT : Number(portText);
  if (portText !== undefined && (!/^\d+$/.test(portText) || port > 65535)) throw new UserError(`--port must be a whole number from 0 to 65535, got '${portText}'`);
  let dashboard;
  try {
    dashboard = await startDashboard({ dirs, port });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UserError(`port ${port} is in use (choose another with --port N, or --port 0 for any free one)`);
    if (code === 'EACCES') throw new UserError(`port ${port} needs privileges this user lacks (choose one above 1023 with --port N)`);
    throw err;
  }
  const runs = discoverRuns(dirs);
  console.log(`marft dashboard: ${dashboard.url} (${runs.length} run${runs.length === 1 ? '' : 's'}: ${runs.map((r) => r.id).join(', ')}); Ctrl-C stops it`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void dashboard.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return 0;
}
