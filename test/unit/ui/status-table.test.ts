import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { formatRunTable } from '../../../src/ui/status-table.js';
import type { RunStatusDoc } from '../../../src/run/status-doc.js';

chalk.level = 0;

const proc = (name: string, o: Partial<RunStatusDoc['processes'][number]> = {}): RunStatusDoc['processes'][number] => ({
  name, role: name === 'frontend' ? 'frontend' : 'agg', pid: 100, alive: false, ready: false, state: 'stopped', kvTokens: null,
  ports: {}, uptimeMs: null, startedAt: null, exitCode: 0, signal: null, log: `/s/${name}.log`, pids: [], ...o,
});

describe('status table of a failed run', () => {
  it('says how the failed process ended (exit code or signal), so the user knows it died on its own', () => {
    const doc: RunStatusDoc = {
      id: 'r1', recipe: 'agg-router', model: 'Qwen/Qwen3-0.6B', state: 'failed', live: false, createdAt: '', updatedAt: '',
      frontendUrl: 'http://127.0.0.1:8000', detached: false, supervisor: { pid: 1, alive: false }, logsDir: '/s/logs',
      processes: [proc('frontend'), proc('agg-0', { state: 'failed', exitCode: null, signal: 'SIGKILL' }), proc('agg-1', { state: 'failed', exitCode: 1 })], unrecorded: [],
    };
    const text = formatRunTable(doc);
    expect(text).toMatch(/agg-0\s+100\s+no\s+no\s+failed \(SIGKILL\)/);
    expect(text).toMatch(/agg-1\s+100\s+no\s+no\s+failed \(exit 1\)/);
    expect(text).toMatch(/frontend\s+100\s+no\s+no\s+stopped\s/);
  });
});
