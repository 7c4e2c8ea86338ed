// `marft serve RUN_OR_CHECKPOINT`: an OpenAI-compatible server of a trained run (src/serve/, docs/serve.md).
import { numberFlag, parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { ConfigError } from '../../config/schema-dsl.ts';
import { TaskOptionError } from '../../tasks/options.ts';
import { openServedRun } from '../../serve/served-run.ts';
import { startServer } from '../../serve/server.ts';


const HELP = `usage: marft serve RUN_OR_CHECKPOINT [--port N] [--host H] [--team] [--batch-window MS]

Serves the checkpoint (a RUN/checkpoints/step-N folder, or a run folder: its latest checkpoint) as an
OpenAI-compatible server: GET /v1/models, POST /v1/chat/completions (the model's chat template),
POST /v1/completions (text or token-id prompts), streaming, log-probs of the sampled tokens, stop
sequences, seeds. Models: "base" (the frozen base model) and one per trained agent, named after the
agent (its adapter). Concurrent requests are batched into the engine's batched sampling. See
docs/serve.md.

  --port N          port to listen on (default 8000; 0 picks a free one, printed)
  --host H          address to listen on (default 127.0.0.1)
  --team            also serve "team": the run's whole workflow as one chat model (the last user
                    message is the problem; the reply is the team's answer, with the transcript
                    in its "marft" field); needs a run of task 'workflow'
  --batch-window MS how long a request waits for others to share its engine call (default 5)

Prints the server's URL and models, then one JSON line {"url", "baseUrl", "models"}; runs until
interrupted (Ctrl-C or SIGTERM).`;

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['port', 'host', 'batch-window'], boolean: ['team'] });
  const [given, ...extra] = parsed.positionals;
  if (!given || extra.length > 0) throw new UserError('expected exactly one RUN_OR_CHECKPOINT folder (see --help)');
  const port = numberFlag(parsed, 'port', 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`--port must be an integer in [0, 65535], got '${stringFlag(parsed, 'port')}'`);
  const windowMs = numberFlag(parsed, 'batch-window', 5);
  if (windowMs < 0 || windowMs > 10_000) throw new UserError(`--batch-window must be between 0 and 10000 milliseconds, got '${stringFlag(parsed, 'batch-window')}'`);
  const host = stringFlag(parsed, 'host') ?? '127.0.0.1';
  let served;
  try {
    served = await openServedRun(given, { team: parsed.flags.has('team') });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof TaskOptionError) throw new UserError(err.message);
    throw err;
  }
  let server;
  try {
    server = await startServer({ engine: served.engine, models: served.models, tokenizer: served.tokenizer, team: served.team, host, port, batchWindowMs: windowMs });
  } catch (err) {
    await served.engine.dispose();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UserError(`--port ${port}: the address ${host}:${port} is in use (choose another port, or --port 0 for a free one)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EACCES') throw new UserError(`--host ${host} --port ${port}: cannot listen there (${code})`);
    throw err;
  }
  const names = served.models.map((m) => m.id);
  console.log(`marft serve: ${server.baseUrl} (checkpoint ${served.run.checkpoint}, step ${served.run.state.step})`);
  console.log(`models: ${served.models.map((m) => (m.kind === 'agent' ? `${m.id} (adapter ${m.adapter})` : m.kind === 'team' ? `${m.id} (workflow ${served.team!.workflowName})` : m.id)).join(', ')}`);
  console.log(JSON.stringify({ url: server.url, baseUrl: server.baseUrl, models: names }));
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  await server.close();
  await served.engine.dispose();
  console.error(`marft serve: stopped (${signal}) after ${server.stats.requests} requests in ${server.stats.engineCalls} engine calls`);
  return 0;
}
