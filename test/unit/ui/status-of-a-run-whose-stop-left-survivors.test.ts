import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { runLiveness } from '../../../src/run/liveness.js';
import { buildRunStatus } from '../../../src/run/status-doc.js';
import { formatRunTable } from '../../../src/ui/status-table.js';
import { visibleLength } from '../../../src/ui/fit.js';
import type { ProcStat } from '../../../src/host/procs/parse-proc.js';
import type { RunRecord } from '../../../src/run/types.js';
import { recordedProcess, stoppingRecord } from '../../helpers/stopping-run.js';

// `status` of a run whose stop gave up on a process that outlived SIGKILL (run.json `survivors`):
// the run is shown live and orphaned with the reason, never `stopped`; the process's row says it
// survived (not ready); a line per survivor gives its pid, command, when, and its state from
// /proc/PID/stat with what that state means; then the teardown to try again and the ps to check.

chalk.level = 0;

const now = Date.parse('2026-12-02T01:09:00.000Z');
const record = (survivors: RunRecord['survivors']): RunRecord => stoppingRecord({
  state: 'stopped',
  processes: [
    recordedProcess('frontend', 100, { state: 'stopped', signal: 'SIGTERM', endedAt: '2026-12-02T01:05:00.100Z' }),
    recordedProcess('agg-0', 101, { state: 'stopped', signal: 'SIGKILL', endedAt: '2026-12-02T01:05:10.000Z', descendants: [{ pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore' }] }),
    recordedProcess('agg-1', 102, { state: 'stopped', signal: 'SIGTERM', endedAt: '2026-12-02T01:05:00.200Z' }),
  ],
  ...(survivors ? { survivors } : {}),
});
const engine = (state: string): ProcStat => ({ pid: 150, comm: 'VLLM::EngineCor', state, ppid: 1, pgid: 101, session: 1, startTicks: 600 });
const SURVIVOR = { name: 'agg-0', pid: 150, startTicks: 600, cmd: 'VLLM::EngineCore', at: '2026-12-02T01:05:12.000Z' };
const doc = (rec: RunRecord, scan: ProcStat[]) => buildRunStatus(rec, runLiveness(rec, scan), '/state', now);
const table = (rec: RunRecord, scan: ProcStat[], columns?: number) => formatRunTable(doc(rec, scan), { now, columns }).trimEnd().split('\n');

describe('a run whose stop left a process stuck in the kernel (state D)', () => {
  it('piped: orphaned with the reason, agg-0 survived SIGKILL (not ready), its line, the teardown to try again and the ps to check', () => {
    const lines = table(record([SURVIVOR]), [engine('D')]);
    // (Whether the URL shows once the frontend has ended is the URL rule's own business, tested with it.)
    expect(lines[0]).toMatch(/^run r {2}agg-router {2}orphaned \(its stop left 1 process SIGKILL could not end\) {2}/);
    expect(lines.find((l) => l.startsWith('  agg-0 '))!.trim().split(/\s{2,}/).slice(0, 5)).toEqual(['agg-0', '101', 'no', 'no', 'survived SIGKILL']);
    expect(lines.find((l) => l.startsWith('  frontend '))!.trim().split(/\s{2,}/)[4]).toBe('stopped');
    expect(lines.slice(5, -1)).toEqual([
      '  ✗ pid 150 (agg-0, VLLM::EngineCore) survived SIGKILL at 01:05:12 (3m48s ago); state D: uninterruptible, stuck in the kernel (e.g. a GPU driver call); it ends when that call returns',
      '  ! its stop could not end it and nothing stops it now; try again with:',
      '    dynamo-dev teardown --run r',
      '    check it with: ps -o pid,stat,args -p 150',
    ]);
    // What that stop ended is no loss, and the generic orphan line is not told.
    expect(lines.join('\n')).not.toMatch(/was killed by|end the run|is gone but processes live/);
  });

  it('at 80 columns every line fits, the commands whole on their lines', () => {
    const lines = table(record([SURVIVOR]), [engine('D')], 80);
    for (const l of lines) expect(visibleLength(l), l).toBeLessThanOrEqual(80);
    expect(lines).toContain('    dynamo-dev teardown --run r');
    expect(lines).toContain('    check it with: ps -o pid,stat,args -p 150');
    expect(lines.join(' ').replace(/\s+/g, ' ')).toContain('state D: uninterruptible, stuck in the kernel (e.g. a GPU driver call); it ends when that call returns');
  });

  it('out of the kernel call (state S): said so, teardown can end it now', () => {
    expect(table(record([SURVIVOR]), [engine('S')]).join('\n')).toContain('state S: no longer stuck, teardown can end it now');
  });

  it('the JSON: state orphaned, live, survivors with the state now; agg-0 not ready, its pids the survivor', () => {
    const d = doc(record([SURVIVOR]), [engine('D')]);
    expect(d).toMatchObject({ state: 'orphaned', live: true, survivors: [{ name: 'agg-0', pid: 150, cmd: 'VLLM::EngineCore', state: 'D', at: SURVIVOR.at }] });
    expect(d.processes[1]).toMatchObject({ name: 'agg-0', alive: false, ready: false, pids: [150] });
  });
});

describe('the same run once nothing of it lives', () => {
  it('the survivor ended (or its pid is another process now): stopped, not live, no survivor lines', () => {
    for (const scan of [[], [{ ...engine('S'), startTicks: 9999 }]]) {
      const d = doc(record([SURVIVOR]), scan);
      expect([d.state, d.live, d.survivors]).toEqual(['stopped', false, []]);
      expect(formatRunTable(d, { now })).not.toMatch(/survived|teardown/);
    }
  });
});
