// What the judge (harness.py) reports on fd 3, and how the controller reads it. Only lines that
// carry this run's nonce count: "<nonce> <JSON record>" and "<nonce>:passed:<i>". The nonce is a
// fresh 128-bit random value per run that exists only in the controller and in the judge's
// process, never in the program's (see harness.py), so a line forged by anyone else carries a
// wrong nonce and is ignored.
import { randomBytes } from 'node:crypto';
import type { TestStatus } from './types.ts';

export interface HarnessRecord {
  status?: TestStatus | 'ok';
  case?: number;
  value?: string;
  error?: string;
  stage?: string;
  done?: boolean;
}

export function freshNonce(): string {
  return randomBytes(16).toString('hex');
}

/** The records of this run and the assertion scripts it declared passed, from the channel's text. */
export function readHarnessChannel(channel: string, nonce: string): { records: HarnessRecord[]; passedScripts: Set<number> } {
  if (!/^[0-9a-f]{32}$/.test(nonce)) throw new RangeError('the nonce must be 32 hex digits');
  const records: HarnessRecord[] = [];
  const passedScripts = new Set<number>();
  const prefix = `${nonce} `;
  const passedPrefix = `${nonce}:passed:`;
  for (const line of channel.split('\n')) {
    if (line.startsWith(passedPrefix)) {
      const index = line.slice(passedPrefix.length);
      if (/^\d+$/.test(index)) passedScripts.add(Number(index));
      continue;
    }
    if (!line.startsWith(prefix)) continue;
    try {
      const record: unknown = JSON.parse(line.slice(prefix.length));
      if (record !== null && typeof record === 'object' && !Array.isArray(record)) records.push(record as HarnessRecord);
    } catch {
      // a torn line (the run was killed mid-write) is no evidence of anything
    }
  }
  return { records, passedScripts };
}
