// The trackers of log.to (src/runs/trackers/): CRC-32C against published vectors, TensorBoard event
// files read back by a reader written here (TFRecord framing, CRCs, the Event protocol buffer), the
// CSV copy of metrics.jsonl, and the console's bar and plain lines on a clock of the test's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32c, maskedCrc32c } from '../../src/runs/trackers/crc32c.ts';
import { fileVersionEvent, scalarsEvent, tfRecord } from '../../src/runs/trackers/event-file.ts';
import { ConsoleTracker, consoleMode, CsvTracker, TensorBoardTracker } from '../../src/runs/trackers/index.ts';
import { duration } from '../../src/runs/trackers/console.ts';
import type { StepMetrics } from '../../src/runs/metrics-log.ts';

const bytes = (n: number, f: (i: number) => number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => f(i));

test('CRC-32C: the check value and the RFC 3720 (iSCSI) B.4 vectors; the mask of TFRecord', () => {
  assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(0)), 0);
  assert.equal(crc32c(bytes(32, () => 0)), 0x8a9136aa);
  assert.equal(crc32c(bytes(32, () => 0xff)), 0x62a8ab43);
  assert.equal(crc32c(bytes(32, (i) => i)), 0x46dd794e);
  assert.equal(crc32c(bytes(32, (i) => 31 - i)), 0x113fdb5c);
  // Masking: rotate right by 15 and add 0xa282ead8 (so a CRC of a CRC differs from the CRC).
  const c = crc32c(new TextEncoder().encode('foo'));
  assert.equal(maskedCrc32c(new TextEncoder().encode('foo')), ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) % 2 ** 32);
  // Every event file TensorFlow writes starts with these 12 bytes: the 24-byte file_version event's
  // length and the masked CRC of that length (an external check of the CRC, the mask and the framing).
  const first = tfRecord(fileVersionEvent(1_700_000_000.25));
  assert.equal(Buffer.from(first.subarray(0, 12)).toString('hex'), '1800000000000000a37f4b22');
});

// ---- a reader of event files, independent of the writer ----

interface Field {
  field: number;
  wire: number;
  /** varint (as bigint), fixed64/fixed32 (raw bytes), or length-delimited bytes. */
  value: bigint | Uint8Array;
}

function readVarint(b: Uint8Array, at: number): [bigint, number] {
  let v = 0n;
  let shift = 0n;
  for (;;) {
    const byte = b[at++]!;
    v |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
    if (!(byte & 0x80)) return [v, at];
  }
}

function fields(b: Uint8Array): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < b.length) {
    const [key, next] = readVarint(b, at);
    at = next;
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, n] = readVarint(b, at);
      out.push({ field, wire, value: v });
      at = n;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      out.push({ field, wire, value: b.subarray(at, at + size) });
      at += size;
    } else if (wire === 2) {
      const [len, n] = readVarint(b, at);
      out.push({ field, wire, value: b.subarray(n, n + Number(len)) });
      at = n + Number(len);
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

interface ReadEvent {
  wallTime: number;
  step: number;
  fileVersion?: string;
  values?: { tag: string; value: number }[];
  sessionStatus?: number;
}

function decodeEvent(b: Uint8Array): ReadEvent {
  const e: ReadEvent = { wallTime: 0, step: 0 };
  const view = (x: Uint8Array) => new DataView(x.buffer, x.byteOffset, x.byteLength);
  for (const f of fields(b)) {
    if (f.field === 1) e.wallTime = view(f.value as Uint8Array).getFloat64(0, true);
    else if (f.field === 2) e.step = Number(BigInt.asIntN(64, f.value as bigint));
    else if (f.field === 3) e.fileVersion = new TextDecoder().decode(f.value as Uint8Array);
    else if (f.field === 5) {
      e.values = fields(f.value as Uint8Array).filter((v) => v.field === 1).map((v) => {
        const inner = fields(v.value as Uint8Array);
        return { tag: new TextDecoder().decode(inner.find((x) => x.field === 1)!.value as Uint8Array), value: view(inner.find((x) => x.field === 2)!.value as Uint8Array).getFloat32(0, true) };
      });
    } else if (f.field === 7) e.sessionStatus = Number(fields(f.value as Uint8Array).find((x) => x.field === 1)?.value ?? 0n);
  }
  return e;
}

/** Every record of an event file, each CRC checked. */
function readEventFile(file: string): ReadEvent[] {
  const b = new Uint8Array(readFileSync(file));
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: ReadEvent[] = [];
  let at = 0;
  while (at < b.length) {
    const len = Number(view.getBigUint64(at, true));
    assert.equal(view.getUint32(at + 8, true), maskedCrc32c(b.subarray(at, at + 8)), `length CRC at ${at}`);
    const data = b.subarray(at + 12, at + 12 + len);
    assert.equal(view.getUint32(at + 12 + len, true), maskedCrc32c(data), `data CRC at ${at}`);
    out.push(decodeEvent(data));
    at += 12 + len + 4;
  }
  return out;
}

test('event records decode to what was written: wall time, step, tags and float32 values', () => {
  const e = decodeEvent(scalarsEvent(12.5, 300, [{ tag: 'score_mean', value: 0.25 }, { tag: 'reward/planner', value: -1.5 }, { tag: 'kl', value: NaN }]));
  assert.equal(e.wallTime, 12.5);
  assert.equal(e.step, 300);
  assert.deepEqual(e.values!.slice(0, 2), [{ tag: 'score_mean', value: 0.25 }, { tag: 'reward/planner', value: -1.5 }]);
  assert.ok(Number.isNaN(e.values![2]!.value));
  assert.deepEqual(decodeEvent(fileVersionEvent(3)), { wallTime: 3, step: 0, fileVersion: 'brain.Event:2' });
});

const line = (step: number, extra: StepMetrics = {}): StepMetrics => ({ step, score_mean: step / 10, value_loss: 0.5, active_agent: 'planner', kl: null, tokens_per_s: 100, ...extra });

test('TensorBoard tracker: file version first, metrics at steps completed, held-out scores under eval/score, a resume marks its restart', async () => {
  const run = mkdtempSync(join(tmpdir(), 'marft-tb-'));
  try {
    const tb = await TensorBoardTracker.open(run, 0);
    await tb.evaluation({ when: 'before', step: 0, score: 0.125, perSeed: [0.125], problems: 8 });
    await tb.step(line(0));
    await tb.step(line(1, { eval_score: 0.75 }));
    // The last step's train.evalEvery score is also the score after training: written once.
    await tb.evaluation({ when: 'after', step: 2, score: 0.75, perSeed: [0.75], problems: 8 });
    await tb.close();
    const [file] = readdirSync(join(run, 'tensorboard'));
    assert.match(file!, /^events\.out\.tfevents\.\d+\..+\.\d+\.\d+$/);
    const events = readEventFile(join(run, 'tensorboard', file!));
    assert.equal(events[0]!.fileVersion, 'brain.Event:2');
    const scalars = events.slice(1).map((e) => [e.step, e.values]);
    assert.deepEqual(scalars, [
      [0, [{ tag: 'eval/score', value: 0.125 }]],
      [1, [{ tag: 'score_mean', value: 0 }, { tag: 'value_loss', value: 0.5 }, { tag: 'tokens_per_s', value: 100 }]],
      [2, [{ tag: 'score_mean', value: Math.fround(0.1) }, { tag: 'value_loss', value: 0.5 }, { tag: 'tokens_per_s', value: 100 }, { tag: 'eval/score', value: 0.75 }]],
    ]);
    assert.ok(events.every((e) => Math.abs(e.wallTime - Date.now() / 1000) < 600));
    // Resumed from the checkpoint at step 1: a second file, whose first event after the version is
    // SessionLog START at step 2 (TensorBoard drops the first session's steps >= 2).
    const resumed = await TensorBoardTracker.open(run, 1);
    await resumed.step(line(1));
    await resumed.close();
    const second = readdirSync(join(run, 'tensorboard')).sort().find((f) => f !== file)!;
    const again = readEventFile(join(run, 'tensorboard', second));
    assert.deepEqual(again.slice(1).map((e) => [e.step, e.sessionStatus ?? null, e.values?.length ?? 0]), [[2, 1, 0], [2, null, 3]]);
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('CSV tracker: metrics.jsonl as a table; a new column rewrites the file; a resume rewrites it from the lines kept', async () => {
  const run = mkdtempSync(join(tmpdir(), 'marft-csv-'));
  try {
    const file = join(run, 'metrics.csv');
    const csv = await CsvTracker.open(file, []);
    assert.equal(readFileSync(file, 'utf8'), '');
    await csv.step({ step: 0, score_mean: 0.5, note: 'a,"b"', kl: null });
    await csv.step({ step: 1, score_mean: 0.25, note: 'c', kl: 0.1 });
    assert.equal(readFileSync(file, 'utf8'), 'step,score_mean,note,kl\n0,0.5,"a,""b""",\n1,0.25,c,0.1\n');
    await csv.step({ step: 2, score_mean: NaN, note: 'd', kl: 0, eval_score: 1 });
    assert.equal(readFileSync(file, 'utf8'), 'step,score_mean,note,kl,eval_score\n0,0.5,"a,""b""",,\n1,0.25,c,0.1,\n2,NaN,d,0,1\n');
    await csv.close();
    const reopened = await CsvTracker.open(file, [{ step: 0, score_mean: 0.5 }]);
    await reopened.step({ step: 1, score_mean: 0.75 });
    assert.equal(readFileSync(file, 'utf8'), 'step,score_mean\n0,0.5\n1,0.75\n');
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('console: time left comes from the steps alone, not the held-out evaluations between them', async () => {
  let clock = 0;
  const out: string[] = [];
  const t = new ConsoleTracker({ mode: 'lines', totalSteps: 10, startStep: 0, every: 1, everySeconds: 0, write: (x) => void out.push(x), now: () => clock });
  // A 15-minute evaluation before the first step, then steps of 150 s.
  clock = 900_000;
  await t.evaluation({ when: 'before', step: 0, score: 0.1, perSeed: [0.1], problems: 4 });
  clock += 150_000;
  await t.step(line(0));
  assert.match(out[1]!, /step 1\/10 .* 17m30s elapsed, 22m30s left,/, '9 steps × 150 s, not 9 × 1,050 s');
  // A step that took 450 s (a train.evalEvery evaluation runs inside its step, and recurs) counts whole.
  clock += 450_000;
  await t.step(line(1));
  assert.match(out.at(-1)!, /step 2\/10 .* 25m00s elapsed, 40m00s left,/, '8 steps × (150 + 450) / 2 s');
  await t.close();
});

test('console: plain lines every N steps or seconds (first and last always), a bar with elapsed, left and tok/s, or nothing', async () => {
  assert.deepEqual([duration(7.4), duration(245), duration(7380)], ['7s', '4m05s', '2h03m']);
  assert.deepEqual([consoleMode(false, true), consoleMode(true, false), consoleMode(undefined, true), consoleMode(undefined, false)], ['off', 'bar', 'bar', 'lines']);
  let clock = 0;
  const out: string[] = [];
  const tracker = (mode: 'bar' | 'lines' | 'off', every: number, everySeconds: number, startStep = 0) =>
    new ConsoleTracker({ mode, totalSteps: 10, startStep, every, everySeconds, write: (t) => void out.push(t), now: () => clock });
  const steps = async (t: ConsoleTracker, from: number, secondsPerStep: number) => {
    for (let s = from; s < 10; s++) {
      clock += secondsPerStep * 1000;
      await t.step(line(s));
    }
    await t.close();
  };
  const printed = () => out.map((l) => Number(/step (\d+)\/10/.exec(l)?.[1]));

  await steps(tracker('lines', 4, 0), 0, 1);
  assert.deepEqual(printed(), [1, 4, 8, 10]);
  assert.equal(out[1], 'marft train: step 4/10  score 0.300 vloss 0.5000  4s elapsed, 6s left, 100 tok/s\n');
  out.length = 0;
  clock = 0;
  await steps(tracker('lines', 0, 25), 0, 10);
  assert.deepEqual(printed(), [1, 4, 7, 10], 'a line once 25 s have passed since the last');
  out.length = 0;
  clock = 0;
  // Resumed at step 6: time left from this session's own pace.
  await steps(tracker('lines', 0, 0, 6), 6, 2);
  assert.deepEqual(printed(), [7, 10]);
  assert.match(out[0]!, /step 7\/10 .* 2s elapsed, 6s left,/);
  out.length = 0;
  clock = 0;
  const bar = tracker('bar', 1, 1);
  await bar.step(line(0));
  clock = 65_000;
  await bar.step(line(1));
  await bar.evaluation({ when: 'after', step: 2, score: 0.5, perSeed: [0.5, 0.5], problems: 4 });
  await bar.close();
  assert.equal(out[1], '\r[#####...................] 2/10 score 0.100 vloss 0.5000 | 1m05s elapsed, 4m20s left, 100 tok/s\x1b[K');
  assert.equal(out[2], '\r\x1b[Kmarft train: held-out score after training (step 2): 0.5000 (2 seeds × 4 problems)\n');
  assert.equal(out.length, 3, 'no extra line when the bar was already ended by the evaluation line');
  out.length = 0;
  await steps(tracker('off', 1, 1), 0, 1);
  assert.deepEqual(out, []);
});
