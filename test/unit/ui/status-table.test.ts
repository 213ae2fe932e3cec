import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { formatRunTable } from '../../../src/ui/status-table.js';
import type { RunStatusDoc } from '../../../src/run/status-doc.js';

chalk.level = 0;

const proc = (name: string, o: Partial<RunStatusDoc['processes'][number]> = {}): RunStatusDoc['processes'][number] => ({
  name, role: name === 'frontend' ? 'frontend' : 'agg', pid: 100, alive: false, ready: false, state: 'stopped', kvTokens: null,
  ports: {}, uptimeMs: null, startedAt: null, exitCode: 0, signal: null, log: `/s/${name}.log`, pids: [],
  endedAt: null, noticedGoneAt: null, diagnosis: null, ...o,
});

describe('status table of a failed run', () => {
  it('says how the failed process ended (exit code or signal), so the user knows it died on its own', () => {
    const doc: RunStatusDoc = {
      id: 'r1', recipe: 'agg-router', model: 'Qwen/Qwen3-0.6B', state: 'failed', live: false, createdAt: '', updatedAt: '',
      frontendUrl: 'http://127.0.0.1:8000', detached: false, supervisor: { pid: 1, alive: false }, logsDir: '/s/logs',
      processes: [proc('frontend'), proc('agg-0', { state: 'failed', exitCode: null, signal: 'SIGKILL' }), proc('agg-1', { state: 'failed', exitCode: 1 })], unrecorded: [],
      lost: [], gpuChecked: false,
    };
    const text = formatRunTable(doc);
    expect(text).toMatch(/agg-0\s+100\s+no\s+no\s+failed \(SIGKILL\)/);
    expect(text).toMatch(/agg-1\s+100\s+no\s+no\s+failed \(exit 1\)/);
    expect(text).toMatch(/frontend\s+100\s+no\s+no\s+stopped\s/);
  });
});

describe('status table of a degraded run', () => {
  it('says degraded on the first line with the lost worker, how and when it ended, and what of it still holds the GPU', () => {
    const now = Date.parse('2026-11-30T10:01:12.000Z');
    const doc: RunStatusDoc = {
      id: 'r2', recipe: 'agg-router', model: 'Qwen/Qwen3-0.6B', state: 'degraded', live: true, createdAt: '', updatedAt: '',
      frontendUrl: 'http://127.0.0.1:8000', detached: true, supervisor: { pid: 1, alive: true }, logsDir: '/s/logs',
      processes: [
        proc('frontend', { alive: true, state: 'ready', exitCode: null }), proc('agg-0', { alive: true, state: 'ready', exitCode: null }),
        proc('agg-1', { state: 'failed', exitCode: null, signal: 'SIGKILL', endedAt: '2026-11-30T10:01:00.000Z' }),
      ],
      lost: [{
        name: 'agg-1', role: 'agg', how: 'killed', exitCode: null, signal: 'SIGKILL', at: '2026-11-30T10:01:00.000Z', noticed: false,
        leftPids: [4242], diagnosis: null, gpuMiB: 3072,
      }],
      gpuChecked: true, unrecorded: [],
    };
    const text = formatRunTable(doc, { now });
    const [first] = text.split('\n');
    expect(first).toBe('run r2  agg-router  degraded: agg-1 killed by SIGKILL 12s ago, its engine lives on  http://127.0.0.1:8000  Qwen/Qwen3-0.6B');
    expect(first).not.toMatch(/\bready\b/);
    expect(text).toMatch(/agg-1\s+100\s+no\s+no\s+failed \(SIGKILL\)/);
    expect(text).toMatch(/! agg-1 was killed by SIGKILL at \d\d:\d\d:\d\d \(12s ago\)/);
    expect(text).toContain('still running: pid 4242, holding 3,072 MiB of GPU memory: a leftover, not part of the run');
    // Its supervisor lives: the lost worker can be started again alone (issue 31), beside the teardown.
    expect(text.replace(/\n +/g, ' ')).toContain('it serves with 1 of 2 workers; start it again alone: dynamo-dev restart agg-1 --run r2; or end the run: dynamo-dev teardown --run r2 (with what is left of it; only the leftover: kill 4242)');
    // Without a supervisor nothing can start it again: only the teardown is said.
    const orphan = formatRunTable({ ...doc, supervisor: { ...doc.supervisor, alive: false } }, { now });
    expect(orphan).toContain('it serves with 1 of 2 workers; end the run: dynamo-dev teardown --run r2 (with what is left of it; only the leftover: kill 4242)');
    expect(orphan).not.toContain('dynamo-dev restart');
  });
});

describe('status table of a detached run', () => {
  it('a detached ready run whose supervisor is gone gets a dim note naming it, not a warning mark', () => {
    const doc: RunStatusDoc = {
      id: 'r3', recipe: 'mocker', model: 'Qwen/Qwen3-0.6B', state: 'ready', live: true, createdAt: '', updatedAt: '',
      frontendUrl: 'http://127.0.0.1:8000', detached: true, supervisor: { pid: 1, alive: false }, logsDir: '/s/logs',
      processes: [proc('frontend', { alive: true, ready: true, state: 'ready', exitCode: null })], unrecorded: [], lost: [], gpuChecked: false,
    };
    const text = formatRunTable(doc, { columns: 80 });
    expect(text).toContain('  · detached: its supervisor (pid 1) is gone, nothing watches it;');
    expect(text).not.toMatch(/^\s*!/m);
  });
});
