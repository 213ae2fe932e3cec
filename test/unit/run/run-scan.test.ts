import { describe, expect, it } from 'vitest';
import { findMarked, fromOtherBoot, markerIn, type MarkerReader } from '../../../src/run/run-scan.js';
import { parseRunRecord } from '../../../src/run/record-schema.js';
import type { ProcStat } from '../../../src/run/proc.js';
import type { RunRecord } from '../../../src/run/types.js';

// Issue 12, causes 3-6: finding a run's processes by its marker, boot ids, and which run.json
// records may be acted on (pure parts; the e2e tests play them on real processes).

const st = (pid: number, startTicks: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid: 1, pgid: pid, session: pid, startTicks });

describe('markerIn', () => {
  it('finds DYNAMO_DEV_RUN anywhere in a NUL-separated environment, exactly', () => {
    expect(markerIn('DYNAMO_DEV_RUN=/s/runs/r1\0HOME=/root\0')).toBe('/s/runs/r1');
    expect(markerIn('HOME=/root\0DYNAMO_DEV_RUN=/s/runs/r1')).toBe('/s/runs/r1');
    expect(markerIn('HOME=/root\0X_DYNAMO_DEV_RUN=/s/runs/r1\0')).toBeNull();
    expect(markerIn('HOME=/root\0DYNAMO_DEV_RUN=\0')).toBeNull();
    expect(markerIn('')).toBeNull();
  });
});

describe('findMarked', () => {
  const env: Record<number, string> = {
    100: 'DYNAMO_DEV_RUN=/s/runs/r1\0', 101: 'DYNAMO_DEV_RUN=/s/runs/r1\0', 102: 'DYNAMO_DEV_RUN=/s/runs/other\0',
    103: 'DYNAMO_DEV_RUN=/s/runs/r1\0', 104: 'DYNAMO_DEV_RUN=/s/runs/r1\0', 105: 'PATH=/bin\0',
  };
  const reads: number[] = [];
  const reader: MarkerReader = {
    uidOf: (pid) => (pid === 103 ? 0 : 1000),
    environ: (pid) => {
      reads.push(pid);
      return env[pid] ?? null;
    },
  };
  it('reads the environment only of our own processes started since the runs began and not known already', () => {
    const scan = [st(100, 600), st(101, 700), st(102, 700), st(103, 700), st(104, 400), st(105, 700), st(1, 1)];
    const found = findMarked(scan, { uid: 1000, minTicks: 500, known: new Set([101]), wanted: new Set(['/s/runs/r1']), selfPid: 999 }, reader);
    expect([...found]).toEqual([[100, '/s/runs/r1']]);
    expect(reads.sort()).toEqual([100, 102, 105]); // 101 known, 103 another uid, 104 too old, 1 never
  });
  it('nothing without a uid or without runs to look for', () => {
    expect(findMarked([st(100, 600)], { uid: null, minTicks: 0, known: new Set(), wanted: new Set(['/s/runs/r1']), selfPid: 1 }, reader).size).toBe(0);
    expect(findMarked([st(100, 600)], { uid: 1000, minTicks: 0, known: new Set(), wanted: new Set(), selfPid: 1 }, reader).size).toBe(0);
  });
});

describe('fromOtherBoot', () => {
  it('only when both boot ids are known and differ (records written before boot ids count as this boot)', () => {
    const rec = (bootId?: string | null) => ({ bootId }) as RunRecord;
    expect(fromOtherBoot(rec('a'), 'b')).toBe(true);
    expect(fromOtherBoot(rec('a'), 'a')).toBe(false);
    expect(fromOtherBoot(rec(undefined), 'a')).toBe(false);
    expect(fromOtherBoot(rec(null), 'a')).toBe(false);
    expect(fromOtherBoot(rec('a'), null)).toBe(false);
  });
});

describe('parseRunRecord', () => {
  const good = {
    id: 'r1', recipe: 'agg', model: 'm', createdAt: 'x', updatedAt: 'x', supervisor: { pid: 50, startTicks: 40, detached: false }, state: 'ready',
    frontendUrl: 'http://127.0.0.1:8000', plan: {}, future: 'kept',
    processes: [{
      name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: null, argv: [], env: {}, ports: { system: 8081 },
      gpuMemoryUtilization: 0.4, state: 'ready', kvTokens: 10, exitCode: null, signal: null, log: '/dev/zero', descendants: [],
    }],
  };
  const parse = (o: unknown, id = 'r1') => parseRunRecord(JSON.stringify(o), id, (n) => `/state/runs/${id}/logs/${n}.log`);
  const why = (o: unknown, id?: string) => {
    const r = parse(o, id);
    return r.ok ? 'ok' : r.reason;
  };
  it('a valid record: unknown fields kept, and each log is where the reader keeps it, never what the record says', () => {
    const r = parse(good);
    expect(r.ok && r.record.processes[0].log).toBe('/state/runs/r1/logs/agg-0.log');
    expect(r.ok && (r.record as unknown as { future: string }).future).toBe('kept');
  });
  it('refuses what could be acted on wrongly: pid/pgid 0 or 1, a null process, another folder\'s id, a bad name', () => {
    const p = good.processes[0];
    expect(why({ ...good, processes: [null] })).toMatch(/^processes\.0: /);
    expect(why({ ...good, processes: [{ ...p, pid: 0 }] })).toMatch(/^processes\.0\.pid: /);
    expect(why({ ...good, processes: [{ ...p, pgid: 1 }] })).toMatch(/^processes\.0\.pgid: /);
    expect(why({ ...good, supervisor: { ...good.supervisor, pid: 1 } })).toMatch(/^supervisor\.pid: /);
    expect(why({ ...good, processes: [{ ...p, descendants: [{ pid: 0, startTicks: 1, cmd: 'x' }] }] })).toMatch(/^processes\.0\.descendants\.0\.pid: /);
    expect(why({ ...good, processes: [{ ...p, name: '../x' }] })).toMatch(/^processes\.0\.name: is not a process name/);
    expect(why(good, 'r2')).toBe('its id "r1" is not its folder\'s');
    expect(why({ ...good, processes: 'x' })).toMatch(/^processes: /);
    expect(parseRunRecord('{', 'r1', () => '')).toMatchObject({ ok: false, reason: expect.stringMatching(/^not JSON/) });
  });
});
