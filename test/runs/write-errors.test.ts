// The write-failure translator: errno codes and the errno text of engines that write through another
// process (the torch worker's Python, safetensors' Rust) become one line naming the path, the reason
// and what to do; any other error stays what it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asWriteFailure, WriteFailedError, writing } from '../../src/runs/write-errors.ts';

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: failed`), { code });

test('errno codes and engines\' errno text become the one-line WriteFailedError naming the path', () => {
  const cases: [unknown, string, RegExp][] = [
    [errno('ENOSPC'), 'ENOSPC', /^cannot write \/r\/x: no space is left on its file system \(ENOSPC\); free space there, or move the folder to a larger disk$/],
    [errno('EDQUOT'), 'EDQUOT', /quota is used up \(EDQUOT\)/],
    [errno('EROFS'), 'EROFS', /^cannot write \/r\/x: its file system is read-only \(EROFS\); remount it read-write, or move the folder to a writable disk$/],
    [errno('EACCES'), 'EACCES', /permission denied \(EACCES\); make it writable for this user/],
    [new Error("torch engine: [Errno 28] No space left on device: '/r/x/adapter_model.safetensors'"), 'ENOSPC', /\(ENOSPC\)/],
    [new Error('torch engine: Error while serializing: IoError(Os { code: 30, kind: ReadOnlyFilesystem, message: "Read-only file system" })'), 'EROFS', /\(EROFS\)/],
  ];
  for (const [err, code, pattern] of cases) {
    const failure = asWriteFailure(err, '/r/x');
    assert.ok(failure instanceof WriteFailedError, String(err));
    assert.equal(failure.code, code);
    assert.equal(failure.path, '/r/x');
    assert.match(failure.message, pattern);
  }
  assert.equal(asWriteFailure(errno('ENOENT'), '/r/x'), null);
  assert.equal(asWriteFailure(new Error('the parameters are not finite'), '/r/x'), null);
});

test('writing passes results and other errors through, and translates a refused write', async () => {
  assert.equal(await writing('/r/x', async () => 7), 7);
  const other = new Error('a bug');
  await assert.rejects(writing('/r/x', async () => { throw other; }), (e) => e === other);
  await assert.rejects(writing('/r/x', async () => { throw errno('ENOSPC'); }), WriteFailedError);
});
