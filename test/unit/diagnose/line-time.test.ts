import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lineTime } from '../../../src/diagnose/line-time.js';
import { SAMPLES } from '../../helpers/cli.js';

// The time a real log line says it was written (for `logs` interleaving), read in UTC.
process.env.TZ = 'UTC';
const near = Date.parse('2026-10-07T05:12:00Z');
const lines = (f: string) => readFileSync(join(SAMPLES, 'logs', f), 'utf8').split('\n');

describe('lineTime on real log lines', () => {
  it('Dynamo tracing (UTC, µs), vLLM behind its EngineCore prefix (local, seconds), a line with none', () => {
    const w = lines('worker-agg-ready.log');
    expect(lineTime(w[0], near)).toBe(Date.parse('2026-10-07T05:12:01.104Z'));
    expect(lineTime(w.find((l) => l.startsWith('(EngineCore pid='))!, near)).toBe(Date.parse(`2026-10-07T${/ (\d\d:\d\d:\d\d) /.exec(w.find((l) => l.startsWith('(EngineCore pid='))!)![1]}Z`));
    expect(lineTime('Traceback (most recent call last):', near)).toBeNull();
    expect(lineTime('', near)).toBeNull();
  });
  it('coloured Dynamo lines (1.6.1 on a terminal), JSON lines, UCX epoch times, the restart marker', () => {
    expect(lineTime(lines('frontend-1.6.1-kv-events-disabled.log')[0], near)).toBe(Date.parse('2026-12-01T06:02:24.478Z'));
    expect(lineTime(lines('frontend-kv-events-disabled.jsonl')[0], near)).toBe(Date.parse('2026-10-07T05:12:20.704Z'));
    expect(lineTime(lines('worker-ucx-no-am.log')[1], near)).toBe(1759819212418);
    expect(lineTime('--- dynamo-dev restart 2026-12-05T13:59:25.123Z: agg-1 stopped and started again (restart 1) ---', near)).toBe(Date.parse('2026-12-05T13:59:25.123Z'));
  });
  it('vLLM\'s time has no year: the one within half a year of the run (a run over New Year)', () => {
    expect(lineTime('INFO 12-31 23:59:59 [x.py:1] a', Date.parse('2027-01-01T00:00:30Z'))).toBe(Date.parse('2026-12-31T23:59:59Z'));
    expect(lineTime('INFO 01-01 00:00:01 [x.py:1] a', Date.parse('2026-12-31T23:59:30Z'))).toBe(Date.parse('2027-01-01T00:00:01Z'));
    expect(lineTime('WARNING 06-01 12:00:00 [x.py:1] a', Date.parse('2026-06-02T00:00:00Z'))).toBe(Date.parse('2026-06-01T12:00:00Z'));
  });
  it('look-alikes are not times: a number at the start, a JSON line without time, a bracketed word', () => {
    expect(lineTime('2026 was a year', near)).toBeNull();
    expect(lineTime('{"level":"INFO"}', near)).toBeNull();
    expect(lineTime('[rank0] hello', near)).toBeNull();
    expect(lineTime('INFO something else', near)).toBeNull();
  });
});
