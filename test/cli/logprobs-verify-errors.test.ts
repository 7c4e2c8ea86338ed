// `marft logprobs` and `marft verify` on bad flags and paths (issue 12, item 5): exit code 2, one
// line, no stack trace. Run in this process (test/cli/findings.test.ts spawns the CLI).
import { test } from 'node:test';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.ts';
import { tinyModelConfig } from '../../src/tasks/tiny-model.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { assertUserError, runInProcess } from './spawn-cli.ts';

test('logprobs and verify: numbers that are not finite or out of range, inputs that are folders or missing, models that are not model folders', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-cli-io-'));
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, '{"tokens": [1, 2]}\n');
  const notAModel = join(dir, 'not-a-model');
  mkdirSync(notAModel);
  const model = join(dir, 'model');
  await createEngine(tinyModelConfig(new CharTokenizer('0123456789'), { hiddenSize: 8, layers: 1, contextLength: 16 }), { seed: 1 }).saveBase(model);
  const logprobs = (...extra: string[]) => ['logprobs', '--model', notAModel, '--input', input, ...extra];
  const cases: [string, string[], RegExp][] = [
    ['--temperature -Infinity', logprobs('--temperature', '-Infinity'), /^marft logprobs: --temperature must be a finite number, got '-Infinity'$/],
    ['--temperature NaN', logprobs('--temperature', 'NaN'), /--temperature must be a number, got 'NaN'$/],
    ['--temperature empty', logprobs('--temperature='), /--temperature must be a number, got ''$/],
    ['--temperature 0', logprobs('--temperature', '0'), /--temperature must be a positive number, got '0'$/],
    ['--temperature -1', logprobs('--temperature', '-1'), /--temperature must be a positive number, got '-1'$/],
    ['--model without config.json', logprobs(), /^marft logprobs: --model .*not-a-model: no config\.json \(not a Hugging Face model folder\)$/],
    ['--model a file', ['logprobs', '--model', input, '--input', input], /--model .*in\.jsonl: is a file; a Hugging Face model folder is expected$/],
    ['--model missing', ['logprobs', '--model', join(dir, 'nope'), '--input', input], /--model .*nope: no such folder$/],
    ['--input missing', ['logprobs', '--model', model, '--input', join(dir, 'nope.jsonl')], /--input .*nope\.jsonl: no such file$/],
    ['--input a folder', ['logprobs', '--model', model, '--input', dir], /--input .*: is a folder, not a file$/],
    ['--model --input', ['logprobs', '--model', '--input', input], /^marft logprobs: --model needs a value, got the flag --input/],
    ['verify: --input a folder', ['verify', 'math', '--input', dir], /^marft verify: --input .*: is a folder, not a file$/],
    ['verify: --timeout Infinity', ['verify', 'code', '--input', input, '--timeout', 'Infinity'], /^marft verify: --timeout must be a finite number, got 'Infinity'$/],
    ['verify: --timeout 1e9', ['verify', 'code', '--input', input, '--timeout', '1e9'], /--timeout must be a number of seconds in \(0, 3600\], got '1e9'$/],
    ['verify: --concurrency 1e9', ['verify', 'code', '--input', input, '--concurrency', '1e9'], /--concurrency must be an integer in \[1, 1024\], got '1e9'$/],
    ['verify: --concurrency abc', ['verify', 'code', '--input', input, '--concurrency', 'abc'], /--concurrency must be a number, got 'abc'$/],
  ];
  for (const [what, args, message] of cases) assertUserError(await runInProcess(args), message, what);
});
