// A server a test starts (vLLM's API server, llama.cpp's llama-server, llama-cpp-python's server),
// started and stopped as marft starts vLLM (src/engine/vllm/server-process.ts): it leads its own
// process group with a watcher that ends the group when the test process ends, however it ends, so
// an interrupted test run leaves no server holding the machine's cores; the start-up wait (exit while
// starting, a timeout with the server's last output) is marft's own.
import { spawnProgramGroup, spawnServerGroup, stopServerGroup, waitUntilServing } from '../../src/engine/vllm/server-process.ts';

export interface TestServer {
  /** Ends the server's process group; resolves once it has exited. */
  stop: () => Promise<void>;
}

export interface TestServerOptions {
  /** The server's name in messages. */
  what: string;
  /** The interpreter: it runs the watcher, then the server (`args` are its arguments, e.g. ['-m', MODULE, …]). */
  python: string;
  /** A program the interpreter becomes instead (llama-server), with `args` as its arguments. */
  program?: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** A GET that answers 200 once the server serves. */
  readyUrl: string;
  timeoutMs: number;
}

/** Starts the server and waits until `readyUrl` answers 200; throws one line with its last output otherwise. */
export async function startTestServer(o: TestServerOptions): Promise<TestServer> {
  const env = o.env ?? process.env;
  const child = o.program ? spawnProgramGroup(o.python, o.program, o.args, env) : spawnServerGroup(o.python, o.args, env);
  let output = '';
  const keep = (d: Buffer): void => { output = (output + d.toString()).slice(-4000); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  await waitUntilServing(child, { what: o.what, readyUrl: o.readyUrl, timeoutMs: o.timeoutMs, pollMs: 250, lastOutput: () => output });
  return { stop: () => stopServerGroup(child) };
}
