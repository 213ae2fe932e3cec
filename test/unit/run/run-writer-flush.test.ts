import { describe, expect, it } from 'vitest';
import { RunWriter } from '../../../src/run/run-writer.js';
import type { RunRecord } from '../../../src/run/types.js';

// The supervisor calls flush() before it exits or answers a stop: whatever the record says at that
// moment must be on disk when flush() resolves, whether or not a write was scheduled before.

describe('RunWriter.flush', () => {
  it('with nothing scheduled, writes the record as it is now and resolves only after the write', async () => {
    const rec = { id: 'r1', state: 'starting', updatedAt: 'old' } as unknown as RunRecord;
    const written: string[] = [];
    const w = new RunWriter(rec, (r) => written.push(r.state), () => {});
    rec.state = 'stopped';
    const flushed = w.flush();
    expect(written).toEqual([]); // the write runs after the ones already in line, never inside the caller
    await flushed;
    expect(written).toEqual(['stopped']);
  });
});
