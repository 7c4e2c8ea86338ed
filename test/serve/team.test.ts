// marft serve --team: the run's GSM8K Duo (Planner → Solver) as one chat model. The reply's message is
// the Solver's turn and the transcript (both agents' turns) comes in its `marft` field; for a seed it is
// exactly the episode the task's workflow plays with the trained agents on the same question; streamed,
// it reassembles to the same answer with the transcript in the last chunk; requests the team model
// cannot answer are 400s, and the agents and the base stay served beside it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { openServedRun, type ServedRun } from '../../src/serve/served-run.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import type { TeamTurn } from '../../src/serve/team.ts';
import type { WorkflowTask } from '../../src/tasks/workflow-task.ts';
import { makeTinyRun } from './tiny-run.ts';

let dir = '';
let served: ServedRun;
let server: RunningServer;
let client: OpenAI;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'marft-serve-team-'));
  const run = await makeTinyRun(dir, { seed: 6 });
  served = await openServedRun(run.runDir, { team: true });
  server = await startServer({ engine: served.engine, models: served.models, tokenizer: served.tokenizer, team: served.team, host: '127.0.0.1', port: 0 });
  client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  await server?.close();
  await served?.engine.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const question = 'A baker makes 12 rolls and sells 5. How many rolls are left?';

interface TeamReply {
  choices: { message: { content: string }; finish_reason: string }[];
  marft: { workflow: string; seed: number | null; answer_agent: string; transcript: TeamTurn[]; feedback: unknown[] };
}

test('the team model lists beside base and the agents', async () => {
  assert.deepEqual((await client.models.list()).data.map((m) => m.id), ['base', 'planner', 'solver', 'team']);
});

test('a team request runs the workflow with the trained agents: the Solver\'s turn is the answer, both turns the transcript', async () => {
  const body = { model: 'team', messages: [{ role: 'system' as const, content: 'ignored by the team' }, { role: 'user' as const, content: question }], temperature: 0.8, max_tokens: 10, seed: 21 };
  const reply = (await client.chat.completions.create(body)) as unknown as TeamReply;
  const { transcript } = reply.marft;
  assert.equal(reply.marft.workflow, 'math-duo');
  assert.equal(reply.marft.seed, 21);
  assert.deepEqual(transcript.map((t) => [t.agent, t.role, t.step, t.model]), [['planner', 'Planner', 0, 'planner'], ['solver', 'Solver', 0, 'solver']]);
  assert.equal(reply.marft.answer_agent, 'solver');
  assert.equal(reply.choices[0]!.message.content, transcript[1]!.content);
  // The same episode as the task plays it directly, with the checkpoint's adapters.
  const task = served.run.bundle.task as WorkflowTask;
  const [episode] = await task.answer(served.engine, [question], served.run.policies, { temperature: 0.8, topP: 1, topK: 0, maxNewTokens: 10 }, 21);
  assert.deepEqual(transcript.map((t) => t.content), episode!.actions.map((a) => a.text));
  assert.deepEqual(episode!.actions.map((a) => a.policy), ['policy-planner', 'policy-solver']);
  assert.ok(transcript.every((t) => t.tokens > 0));
  // Another seed, another episode: the comparison is not of constant outputs.
  const other = (await client.chat.completions.create({ ...body, seed: 22 })) as unknown as TeamReply;
  assert.notDeepEqual(other.marft.transcript.map((t) => t.content), transcript.map((t) => t.content));
});

test('a streamed team reply reassembles to the answer, with the transcript in its last chunk', async () => {
  const body = { model: 'team', messages: [{ role: 'user' as const, content: question }], temperature: 1, max_tokens: 12, seed: 3 };
  const whole = (await client.chat.completions.create(body)) as unknown as TeamReply;
  let text = '';
  let marft: TeamReply['marft'] | undefined;
  let finish: string | null = null;
  for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    marft = (chunk as unknown as { marft?: TeamReply['marft'] }).marft ?? marft;
  }
  assert.equal(text, whole.choices[0]!.message.content);
  assert.equal(finish, whole.choices[0]!.finish_reason);
  assert.deepEqual(marft, whole.marft);
});

test('what the team model cannot answer is a 400, and it answers afterwards', async () => {
  const refused = async (request: Promise<unknown>, param: string): Promise<void> => {
    await assert.rejects(request, (err: InstanceType<typeof OpenAI.BadRequestError>) => err.status === 400 && err.param === param);
  };
  await refused(client.chat.completions.create({ model: 'team', messages: [{ role: 'user', content: question }], n: 2 }), 'n');
  await refused(client.chat.completions.create({ model: 'team', messages: [{ role: 'assistant', content: 'no question here' }] }), 'messages');
  await refused(client.completions.create({ model: 'team', prompt: question }), 'model');
  const ok = (await client.chat.completions.create({ model: 'team', messages: [{ role: 'user', content: question }], max_tokens: 4 })) as unknown as TeamReply;
  assert.equal(ok.marft.transcript.length, 2);
  assert.equal(ok.marft.seed, null, 'no seed given: none reported');
});
