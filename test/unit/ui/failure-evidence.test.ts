import { describe, expect, it } from 'vitest';
import { formatDiagnosis, formatReady } from '../../../src/ui/up-report.js';

// The cause's evidence line in a failure report: one line of whole words, and never empty because
// the log line starts with a long path (the fake and real Error 804 start with torch's warning path).
const d = {
  code: 'cuda.error804', title: 'CUDA Error 804', severity: 'error' as const, explanation: 'e', fix: 'f', file: '/s/runs/r1/logs/agg-1.log', line: 2,
  text: '/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility was attempted on non supported HW',
};

describe('failure report evidence line', () => {
  it.each([80, 120])('at %i columns a leading path shrinks to its file name and the message shows', (cols) => {
    const line = formatDiagnosis(d, '  ', cols)[1];
    expect(line).toMatch(/^ {2}agg-1\.log:2: …\/__init__\.py:182: UserWarning: CUDA initialization: Unexpected/);
    expect(line.length).toBeLessThanOrEqual(cols);
    expect(line.endsWith('…') ? /\S…$/.test(line) : true).toBe(true);
  });
});

describe('ready summary log paths', () => {
  const ready = (dir: string) => ({
    event: 'ready' as const, runId: 'r1', url: 'http://127.0.0.1:8000', model: 'm', curl: 'curl -s x', workers: [], ms: 1, detached: false,
    logs: { frontend: `${dir}/frontend.log`, 'agg-0': `${dir}/agg-0.log` },
  });
  it('beside their names when every path fits the width', () => {
    const text = formatReady(ready('/s/runs/r1/logs'), null, { columns: 80 });
    expect(text).toContain('\n    frontend  /s/runs/r1/logs/frontend.log\n    agg-0     /s/runs/r1/logs/agg-0.log\n');
  });
  it('each alone at column 0 under its name when one does not fit (never wrapped under the name column)', () => {
    const dir = '/home/someone/.local/state/dynamo-dev/runs/20261201-100138-559-agg-router/logs';
    const lines = formatReady(ready(dir), null, { columns: 80 }).split('\n');
    const at = lines.indexOf('    frontend');
    expect(lines.slice(at, at + 4)).toEqual(['    frontend', `${dir}/frontend.log`, '    agg-0', `${dir}/agg-0.log`]);
  });
});
