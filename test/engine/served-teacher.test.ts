// A served MAS-OPD teacher from a configuration (teacher.engine openai | vllm, src/run/teacher.ts):
//   - without any real server (these run in CI): the one-line refusals of a served teacher, through
//     openTeacher, against a stand-in OpenAI-compatible server written here (node:http) that lists
//     models and answers completions without prompt log-probs, as llama.cpp's llama-server does; and
//     through `marft train`, refused before any step (no metrics.jsonl, no checkpoint);
//   - with vLLM (.venv-vllm): one MAS-OPD step of examples/mas-opd-tiny.yaml through `marft train` with
//     teacher.engine vllm (marft starts the server on teacher.path) gives the embedded teacher's role
//     adapters within 1e-4, greedy rollouts and Adam's ε raised to 1e-3 as in torch-opd-step.test.ts;
//   - with llama.cpp (.venv-llamacpp): teacher.engine openai at a real llama-server is refused in one
//     line before any step.
// The teacher folder is a tiny Qwen3 of scripts/make-tiny-model.ts with hidden size 256 (vLLM's CPU
// attention needs 64-wide heads) and the students' character tokenizer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { ConfigError } from '../../src/config/schema-dsl.ts';
import { freePort } from '../../src/engine/vllm/server.ts';
import { buildTask } from '../../src/run/setup.ts';
import { openTeacher } from '../../src/run/teacher.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';
import { startTestServer } from './test-server.ts';
import { skipWithoutVllm, vllmPython } from './vllm-helpers.ts';
import { adapterDiff } from './adapter-diff.ts';

const example = join(repoRoot, 'examples/mas-opd-tiny.yaml');
const skipVllm = skipWithoutVllm;
const llamaPython = join(repoRoot, '.venv-llamacpp/bin/python');
const llamaServer = join(repoRoot, '.venv-llamacpp/bin/llama-server');
const skipLlama = !existsSync(llamaPython) || !existsSync(llamaServer) ? `no ${existsSync(llamaPython) ? llamaServer : llamaPython}: bash scripts/setup.sh --llamacpp builds llama.cpp's server for this test` : false;
const ROLES = ['opd-reasoner', 'opd-tool-user'];
// vLLM on the CPU: a small KV cache, no thread pinning, one OpenMP thread (as the other vLLM tests).
const VLLM_ENV = { VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: '1' };

let dir = '';
let teacherDir = '';
/** The stand-in server: `models` is what GET /v1/models lists; completions carry no prompt log-probs. */
let fake: Server;
let fakeUrl = '';
let fakeModels = ['stand-in'];

before(async () => {
  dir = tempDir('served-teacher');
  teacherDir = join(dir, 'teacher');
  execFileSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/make-tiny-model.ts'), '--out', teacherDir, '--hidden-size', '256', '--seed', '1'], { cwd: repoRoot });
  fake = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.end(JSON.stringify({ object: 'list', data: fakeModels.map((id) => ({ id, object: 'model' })) }));
    } else if (req.method === 'POST' && req.url === '/v1/completions') {
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ choices: [{ index: 0, text: 'x', finish_reason: 'length', logprobs: null }] })));
    } else {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
    }
  });
  const port = await freePort();
  await new Promise<void>((r) => fake.listen(port, '127.0.0.1', r));
  fakeUrl = `http://127.0.0.1:${port}/v1`;
});

after(async () => {
  await new Promise((r) => fake?.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function teacherError(sets: string[]): Promise<Error> {
  const config = await loadConfig(example, [`teacher.path=${teacherDir}`, ...sets]);
  const bundle = await buildTask(config);
  try {
    const teacher = await openTeacher(config, bundle.task);
    await teacher?.dispose();
  } catch (err) {
    return err as Error;
  }
  assert.fail('the teacher was opened');
}

test('teacher.engine openai: a server that cannot score, a missing url, an unreachable server and an unnamed model among several are refused in one line naming the key', async () => {
  const oneLine = (e: Error, pattern: RegExp) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.match(e.message, pattern);
    assert.ok(!e.message.includes('\n'), e.message);
  };
  fakeModels = ['stand-in'];
  oneLine(await teacherError(['teacher.engine=openai', `teacher.url=${fakeUrl}`]),
    new RegExp(`^teacher\\.engine: openai: cannot be the teacher, which scores the students' tokens: ${fakeUrl.replace(/\./g, '\\.')} cannot score a given sequence: its completions carry no prompt log-probs`));
  oneLine(await teacherError(['teacher.engine=openai']), /^teacher\.url: teacher\.engine openai needs the server's OpenAI API root/);
  const closed = await freePort();
  oneLine(await teacherError(['teacher.engine=openai', `teacher.url=http://127.0.0.1:${closed}/v1`]), new RegExp(`^teacher\\.engine: openai: http://127\\.0\\.0\\.1:${closed}/v1/models: .*ECONNREFUSED`));
  fakeModels = ['a', 'b'];
  oneLine(await teacherError(['teacher.engine=openai', `teacher.url=${fakeUrl}`]), /^teacher\.servedModel: http:\/\/\S+ serves 2 models \(a, b\): name the one to use$/);
  oneLine(await teacherError(['teacher.engine=openai', `teacher.url=${fakeUrl}`, 'teacher.servedModel=c']), /^teacher\.engine: openai: http:\/\/\S+ serves no model named 'c' \(it serves: a, b\)$/);
  fakeModels = ['stand-in'];
});

/** `marft train` of one step of the tiny MAS-OPD example with these settings; returns its result. */
function trainStep(runDir: string, sets: string[]) {
  const settings = [`teacher.path=${teacherDir}`, 'train.steps=1', 'rollout.temperature=0', 'actor.optim.eps=1e-3', ...sets].flatMap((s) => ['--set', s]);
  return runCli({ args: ['train', example, '--run-dir', runDir, ...settings, '--no-progress'], cwd: repoRoot });
}

/** A refusal of `marft train`: exit 2, one line, and no step ran (no metrics, no checkpoint). */
function assertRefusedBeforeAnyStep(r: { status: number | null; stderr: string }, runDir: string, pattern: RegExp): void {
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, pattern);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.ok(!existsSync(join(runDir, 'metrics.jsonl')), 'a step ran');
  assert.ok(!existsSync(join(runDir, 'checkpoints')) || readdirSync(join(runDir, 'checkpoints')).length === 0, 'a checkpoint was written');
}

test('marft train with teacher.engine openai at a server without prompt log-probs stops in one line before any step', { timeout: 120_000 }, async () => {
  const runDir = join(dir, 'refused');
  const r = await trainStep(runDir, ['teacher.engine=openai', `teacher.url=${fakeUrl}`]);
  assertRefusedBeforeAnyStep(r, runDir, /^marft train: teacher\.engine: openai: cannot be the teacher, which scores the students' tokens: http:\/\/\S+ cannot score a given sequence/);
});


const metricsOf = (runDir: string): Record<string, number> => {
  const lines = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 1);
  return JSON.parse(lines[0]!) as Record<string, number>;
};

test('one MAS-OPD step with teacher.engine vllm (a server marft starts on teacher.path) gives the embedded teacher\'s role adapters within 1e-4', { skip: skipVllm, timeout: 600_000 }, async () => {
  const embeddedRun = join(dir, 'embedded');
  const e = await trainStep(embeddedRun, ['teacher.engine=embedded']);
  assert.equal(e.status, 0, e.stderr);
  const servedRun = join(dir, 'vllm');
  const saved = { ...process.env };
  Object.assign(process.env, VLLM_ENV);
  const running = trainStep(servedRun, ['teacher.engine=vllm']); // spawned with this environment
  process.env = saved;
  const v = await running;
  assert.equal(v.status, 0, v.stderr);
  const [a, b] = [metricsOf(embeddedRun), metricsOf(servedRun)];
  // The same students and greedy rollouts: the same batch; only the teacher's scores come from elsewhere.
  for (const key of ['responses_reasoner', 'responses_tool_user', 'score_mean', 'turns_mean', 'student_logprob_reasoner', 'student_logprob_tool_user']) assert.equal(b[key], a[key], key);
  let metricDiff = 0;
  for (const key of ['teacher_logprob_reasoner', 'teacher_logprob_tool_user', 'a_opd_reasoner', 'a_opd_tool_user', 'a_role_reasoner', 'a_role_tool_user', 'policy_loss', 'grad_norm_actor', 'importance_weight_mean']) {
    assert.ok(Number.isFinite(a[key]) && Number.isFinite(b[key]) && Math.abs(a[key]! - b[key]!) <= 1e-4, `${key}: embedded ${a[key]}, vllm ${b[key]}`);
    metricDiff = Math.max(metricDiff, Math.abs(a[key]! - b[key]!));
  }
  assert.notEqual(b['importance_weight_mean'], 1, 'the second minibatch is importance-weighted');
  const adapters = (runDir: string) => join(runDir, 'checkpoints', 'step-000001', 'adapters');
  assert.deepEqual(readdirSync(adapters(servedRun)).sort(), ROLES);
  let worst = 0;
  for (const role of ROLES) {
    const { diff, moved } = adapterDiff(join(adapters(embeddedRun), role), join(adapters(servedRun), role));
    assert.ok(moved, `${role}: the adapter was not updated`);
    assert.ok(diff <= 1e-4, `${role}: max |embedded − vllm| = ${diff}`);
    worst = Math.max(worst, diff);
  }
  console.log(`served teacher (vLLM): max |Δ adapter| ${worst.toExponential(2)}, max |Δ metric| ${metricDiff.toExponential(2)}`);
});

test('marft train with teacher.engine openai at a real llama-server (no prompt log-probs) stops in one line before any step', { skip: skipLlama, timeout: 120_000 }, async () => {
  const gguf = join(dir, 'teacher.gguf');
  execFileSync(llamaPython, [join(repoRoot, 'scripts/hf-to-gguf.py'), teacherDir, gguf]);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/v1`;
  const server = await startTestServer({ what: 'llama-server', python: llamaPython, program: llamaServer, readyUrl: `http://127.0.0.1:${port}/health`, timeoutMs: 60_000,
    args: ['-m', gguf, '--alias', 'tiny', '--host', '127.0.0.1', '--port', String(port), '-c', '4096', '-t', '1', '-np', '1'] });
  try {
    const runDir = join(dir, 'llama');
    const r = await trainStep(runDir, ['teacher.engine=openai', `teacher.url=${url}`]);
    assertRefusedBeforeAnyStep(r, runDir, new RegExp(`^marft train: teacher\\.engine: openai: cannot be the teacher, which scores the students' tokens: http://127\\.0\\.0\\.1:${port}/v1 cannot score a given sequence: its completions carry no prompt log-probs \\(vLLM's prompt_logprobs; llama\\.cpp's llama-server has none\\)$`, 'm'));
  } finally {
    await server.stop();
  }
});
