import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/logs.errors.js';
import { signatureFor } from '../../../src/diagnose/signatures.js';
import { formatFailureReport } from '../../../src/ui/up-report.js';
import { fakeFacts } from '../../helpers/facts.js';
import { finding, logSet } from '../checks-logs/log-sets.js';

// A fix is a command to paste: `dynamo-dev logs PROCESS` from the signature table names the
// process whose log matched, in up's failure report and in doctor's logs.errors.
const sig = signatureFor('python.exception')!;
const strip = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

describe('fixes name the process', () => {
  it("up's failure report: the failed worker's name where the table says PROCESS", () => {
    const diagnosis = { code: sig.code, title: sig.title, severity: 'error' as const, explanation: sig.explanation, fix: sig.fix, text: 'IndexError: index 1 is out of bounds', file: '/s/runs/r1/logs/agg-0.log', line: 15 };
    const report = strip(formatFailureReport(
      { event: 'failed', reason: 'agg-0 exited with code 1 before it was ready', process: 'agg-0', diagnosis, hint: null, lastLines: [], log: '/s/runs/r1/logs/agg-0.log' },
      null,
      { columns: 200, model: 'Qwen/Qwen3-0.6B' },
    ));
    expect(report).toContain('`dynamo-dev logs agg-0 --lines 80`');
    expect(report).not.toContain('PROCESS');
  });

  it("doctor's logs.errors: the process of the file its first error is in", async () => {
    const file = '/runs/r/logs/agg-1.log';
    const logs = logSet('run', [{ path: file, process: 'agg-1', role: 'agg' }], [finding('python.exception', file, 15, 'IndexError: x', { severity: 'error', fix: sig.fix })]);
    const r = await check.run(fakeFacts({ logs }));
    expect(r.fix).toContain('`dynamo-dev logs agg-1 --lines 80`');
    const unnamed = await check.run(fakeFacts({ logs: logSet('paths', [{ path: '/tmp/x.log' }], [finding('python.exception', '/tmp/x.log', 1, 'E', { severity: 'error', fix: sig.fix })]) }));
    expect(unnamed.fix).toContain('dynamo-dev logs PROCESS'); // no process to name: the placeholder stays
  });
});
