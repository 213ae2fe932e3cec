import { describe, expect, it } from 'vitest';
import { basePlan } from '../../helpers/supervisor-harness.js';
import { recordBeforeSpawn } from '../../../src/run/record-before-spawn.js';
import { DiskFullError } from '../../../src/errors.js';
import { runDir, runJsonPath } from '../../../src/run/paths.js';
import { MIN_FREE_BYTES } from '../../../src/run/supervisor-types.js';
import type { RunCore } from '../../../src/run/run-core.js';
import type { UpEvent } from '../../../src/run/events.js';

// recordBeforeSpawn, what a run does before its first spawn: the discovery folders made, run.json
// written, and a disk too full for the record (under MIN_FREE_BYTES, or a write that fails with
// ENOSPC) is up's failure, said once naming run.json, with nothing written and nothing started.

const stateDir = '/state';
const runId = 'r1';

function core(free: number | null, writeRun?: () => void) {
  const calls: string[] = [];
  const events: UpEvent[] = [];
  const processes = basePlan.processes.map((p, i) => ({ ...p, env: i === 0 ? {} : { DYN_FILE_KV: '/state/runs/r1/kv' } }));
  const s = {
    o: { plan: { ...basePlan, processes }, stateDir, runId },
    record: { id: runId, updatedAt: 'then' },
    finishing: false,
    d: {
      mkdirs: (d: string) => void calls.push(`mkdirs ${d}`),
      freeBytes: (p: string) => { calls.push(`freeBytes ${p}`); return free; },
      writeRun: (dir: string, r: { id: string }) => { calls.push(`writeRun ${dir} ${r.id}`); writeRun?.(); },
    },
    emitEvent: (e: UpEvent) => void events.push(e),
  };
  return { s, calls, events, run: () => recordBeforeSpawn(s as unknown as RunCore) };
}

describe('recordBeforeSpawn', () => {
  it('room for the record (exactly the minimum): the discovery folder made once, then run.json written; nothing said', () => {
    const c = core(MIN_FREE_BYTES);
    expect(c.run()).toBeNull();
    expect(c.calls).toEqual(['mkdirs /state/runs/r1/kv', `freeBytes ${runDir(stateDir, runId)}`, 'writeRun /state r1']);
    expect(c.s.record.updatedAt).not.toBe('then');
    expect(c.s.finishing).toBe(false);
    expect(c.events).toEqual([]);
  });

  it('free space unknown: written', () => {
    const c = core(null);
    expect(c.run()).toBeNull();
    expect(c.calls.at(-1)).toBe('writeRun /state r1');
  });

  it('one byte under the minimum: failed naming run.json and "nothing was started", run.json never written', () => {
    const c = core(MIN_FREE_BYTES - 1);
    const reason = new DiskFullError(runJsonPath(stateDir, runId), 'ENOSPC').message;
    expect(c.run()).toEqual({ outcome: 'failed', code: 1, reason });
    expect(c.calls.some((x) => x.startsWith('writeRun'))).toBe(false);
    expect(c.s.finishing).toBe(true);
    expect(c.events).toEqual([{ event: 'failed', reason: `${reason}; nothing was started`, process: null, diagnosis: null, hint: null, lastLines: [], log: null }]);
  });

  it('the write itself finds the disk full: the same failure; another error is not a full disk and is thrown', () => {
    const full = new DiskFullError(runJsonPath(stateDir, runId), 'EDQUOT');
    const c = core(null, () => { throw full; });
    expect(c.run()).toEqual({ outcome: 'failed', code: 1, reason: full.message });
    expect(c.events).toHaveLength(1);
    const other = new Error('EACCES');
    const d = core(null, () => { throw other; });
    expect(() => d.run()).toThrow(other);
    expect(d.events).toEqual([]);
    expect(d.s.finishing).toBe(false);
  });
});
