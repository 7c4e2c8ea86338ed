// The judging thread of timed-judge.ts: answers each {gold, pred, benchmark?, problem?} message with
// {equal}, in order: scoreAnswer under the named benchmark's scorer, else mathAnswersEqual.
// It says 'ready' once the verifier (and its computer-algebra engine) is loaded, so that loading is
// never counted against a line's time limit.
import { parentPort } from 'node:worker_threads';
import { mathAnswersEqual } from './index.ts';
import { scoreAnswer, type BenchmarkProblemInfo } from './benchmarks/index.ts';

if (!parentPort) throw new Error('judge-worker.ts runs as a worker thread (see timed-judge.ts)');
const port = parentPort;
port.on('message', (job: { gold: string; pred: string; benchmark?: string; problem?: BenchmarkProblemInfo }) => {
  port.postMessage({ equal: scoreAnswer(job.benchmark, job.gold, job.pred, job.problem) });
});
// The computer-algebra engine is built on its first use: use it once before saying 'ready'.
mathAnswersEqual('\\frac{1}{2}', '0.5');
port.postMessage('ready');
