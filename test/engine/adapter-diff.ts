// Comparing two saved PEFT adapter folders, for the tests that train one step on two engines (or
// with two teachers) and expect the same update.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readSafetensors } from '../../src/engine/hf/safetensors.ts';

/** Largest |a − b| over the same-named tensors of two adapter folders, and whether LoRA B moved off zero. */
export function adapterDiff(a: string, b: string): { diff: number; moved: boolean } {
  const ta = readSafetensors(join(a, 'adapter_model.safetensors')), tb = readSafetensors(join(b, 'adapter_model.safetensors'));
  assert.deepEqual([...ta.keys()].sort(), [...tb.keys()].sort());
  let diff = 0;
  let moved = false;
  for (const [k, t] of ta) {
    const u = tb.get(k)!.data;
    assert.equal(u.length, t.data.length, k);
    for (let i = 0; i < t.data.length; i++) diff = Math.max(diff, Math.abs(t.data[i]! - u[i]!));
    // LoRA B starts at zero: a non-zero B means the step did update the adapter.
    if (k.includes('lora_B') && t.data.some((x) => x !== 0)) moved = true;
  }
  return { diff, moved };
}
