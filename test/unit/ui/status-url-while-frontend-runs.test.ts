import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { formatRunTable } from '../../../src/ui/status-table.js';
import type { RunStatusDoc } from '../../../src/run/status-doc.js';

// status's first line shows the frontend URL only while the frontend process runs, whatever the
// run's state: a URL next to a frontend that has ended invites a curl that cannot answer.

chalk.level = 0;

type Proc = RunStatusDoc['processes'][number];
const proc = (name: string, alive: boolean, o: Partial<Proc> = {}): Proc => ({
  name, role: name === 'frontend' ? 'frontend' : 'agg', pid: name === 'frontend' ? 100 : 101, alive, ready: alive, state: alive ? 'ready' : 'failed',
  kvTokens: null, ports: {}, uptimeMs: null, startedAt: null, exitCode: alive ? null : 1, signal: null, log: `/s/${name}.log`,
  pids: alive ? [name === 'frontend' ? 100 : 101] : [], endedAt: null, noticedGoneAt: null, diagnosis: null, ...o,
});
const doc = (state: RunStatusDoc['state'], frontendAlive: boolean, o: Partial<RunStatusDoc> = {}): RunStatusDoc => ({
  id: 'r', recipe: 'agg', model: 'm', state, live: true, createdAt: '', updatedAt: '', frontendUrl: 'http://127.0.0.1:8000',
  detached: false, supervisor: { pid: 50, alive: state !== 'orphaned' }, logsDir: '/s/logs',
  processes: [proc('frontend', frontendAlive), proc('agg-0', true)], unrecorded: [], lost: [], gpuChecked: false, ...o,
});
const first = (d: RunStatusDoc) => formatRunTable(d, { now: 0 }).split('\n')[0];

describe('the frontend URL on status\'s first line', () => {
  it.each(['ready', 'degraded', 'orphaned', 'starting'] as const)('%s with its frontend running: shown', (state) => {
    expect(first(doc(state, true))).toContain('  http://127.0.0.1:8000  m');
  });

  it.each(['ready', 'degraded', 'orphaned', 'starting'] as const)('%s with its frontend ended: none', (state) => {
    expect(first(doc(state, false))).toMatch(/  m$/);
    expect(first(doc(state, false))).not.toContain('http://');
  });

  it('a degraded run that lost its frontend names the loss and no URL', () => {
    const d = doc('degraded', false, {
      lost: [{ name: 'frontend', role: 'frontend', how: 'exited', exitCode: 1, signal: null, at: null, noticed: false, leftPids: [], diagnosis: null, gpuMiB: null }],
    });
    expect(first(d)).toBe('run r  agg  degraded: frontend exited 1  m');
  });

  it('a frontend whose pid is no longer ours (alive false, though its record said ready): none', () => {
    expect(first(doc('orphaned', false, { processes: [proc('frontend', false, { state: 'ready', exitCode: null }), proc('agg-0', true)] }))).not.toContain('http://');
  });
});
