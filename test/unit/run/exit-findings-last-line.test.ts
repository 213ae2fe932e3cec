import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { addExitFindings } from '../../../src/run/exit-findings.js';
import type { ScanResult } from '../../../src/diagnose/types.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';
import { tempHome } from '../../helpers/cli.js';

// `diagnose` of a run whose process exited badly: one finding per such process, quoting its log's
// last non-empty line when no signature explains the log, and only for the logs that were scanned.

const h = tempHome('dd-exits-');
afterAll(() => h.cleanup());

const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
  name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 1, startedAt: null, argv: [], env: {}, ports: {}, gpuMemoryUtilization: null,
  state: 'failed', kvTokens: null, exitCode: 1, signal: null, log: join(h.dir, 'agg-0.log'), descendants: [], ...o,
});
const run = (processes: ProcessRecord[]): RunRecord => ({ id: 'r1', processes } as unknown as RunRecord);
const scanOf = (files: string[], o: Partial<ScanResult> = {}): ScanResult => ({
  files: files.length, bytes: 0, findings: [], kvTokens: Object.fromEntries(files.map((f) => [f, null])), byFile: Object.fromEntries(files.map((f) => [f, []])), ...o,
});

describe('the finding of a process that exited badly', () => {
  it('quotes the last non-empty line of its log, numbered in the whole file', async () => {
    const log = join(h.dir, 'a.log');
    writeFileSync(log, 'one\ntwo\nthree\n  Killed  \n\n   \n');
    const out = await addExitFindings(scanOf([log], { lines: { [log]: 6 } }), run([proc({ log })]));
    expect(out.findings).toHaveLength(1);
    expect(out.findings[0]).toMatchObject({ code: 'run.process-exited', severity: 'error', file: log, line: 4, text: 'agg-0 exited with code 1: Killed' });
    expect(out.byFile![log]).toEqual([{ code: 'run.process-exited', severity: 'error', count: 1, line: 4, text: 'agg-0 exited with code 1: Killed' }]);
  });

  it('a coloured last line (the real mocker logs with ANSI colours into its file) is quoted as plain text', async () => {
    const log = join(h.dir, 'colour.log');
    writeFileSync(log, '\x1b[2m2026-12-01T11:52:12.422948Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[1mhandle_payload\x1b[0m: request completed\n');
    const out = await addExitFindings(scanOf([log]), run([proc({ log, exitCode: null, signal: 'SIGKILL' })]));
    expect(out.findings[0].text).toBe('agg-0 was killed by SIGKILL: 2026-12-01T11:52:12.422948Z  INFO handle_payload: request completed');
  });

  it('without a line count from the scan, the line is counted in the tail read', async () => {
    const log = join(h.dir, 'b.log');
    writeFileSync(log, 'a\nb\nlast words\n');
    const out = await addExitFindings(scanOf([log], { lines: undefined }), run([proc({ log })]));
    expect(out.findings[0]).toMatchObject({ line: 3, text: 'agg-0 exited with code 1: last words' });
  });

  it('a last line longer than 500 characters is cut to 499 and an ellipsis; one of exactly 500 is whole', async () => {
    const long = join(h.dir, 'c.log');
    writeFileSync(long, `${'x'.repeat(501)}\n`);
    const exact = join(h.dir, 'd.log');
    writeFileSync(exact, `${'y'.repeat(500)}\n`);
    const out = await addExitFindings(scanOf([long, exact]), run([proc({ log: long }), proc({ name: 'agg-1', log: exact })]));
    expect(out.findings.map((f) => f.text)).toEqual([`agg-0 exited with code 1: ${'x'.repeat(499)}…`, `agg-1 exited with code 1: ${'y'.repeat(500)}`]);
  });

  it('a log a signature explains is not read for its last line: the finding quotes the cause', async () => {
    const log = join(h.dir, 'e.log');
    writeFileSync(log, 'torch.OutOfMemoryError: CUDA out of memory\nlast\n');
    const scan = scanOf([log], { byFile: { [log]: [{ code: 'cuda.oom', severity: 'error', count: 1, line: 1, text: 'torch.OutOfMemoryError: CUDA out of memory' }] } });
    const out = await addExitFindings(scan, run([proc({ log })]));
    expect(out.findings[0]).toMatchObject({ line: 1, text: 'agg-0 exited with code 1: torch.OutOfMemoryError: CUDA out of memory' });
  });

  it('an empty or missing log: the finding says how it ended, with no quote', async () => {
    const empty = join(h.dir, 'f.log');
    writeFileSync(empty, '\n\n');
    const missing = join(h.dir, 'never.log');
    const out = await addExitFindings(scanOf([empty, missing]), run([proc({ log: empty }), proc({ name: 'agg-1', log: missing })]));
    expect(out.findings.map((f) => [f.text, f.line])).toEqual([['agg-0 exited with code 1', 0], ['agg-1 exited with code 1', 0]]);
  });

  it('nothing ended badly: the scan is returned as it was', async () => {
    const scan = scanOf([]);
    expect(await addExitFindings(scan, run([proc({ state: 'stopped' })]))).toBe(scan);
  });

  it('only the logs that were scanned (a single file given to diagnose), named as the user spelled them', async () => {
    const a = join(h.dir, 'g.log');
    const b = join(h.dir, 'h.log');
    writeFileSync(a, 'end of a\n');
    writeFileSync(b, 'end of b\n');
    const spelled = relative(process.cwd(), a);
    const out = await addExitFindings(scanOf([spelled]), run([proc({ log: a }), proc({ name: 'agg-1', log: b })]), { only: new Set([spelled]) });
    expect(out.findings.map((f) => [f.file, f.text])).toEqual([[spelled, 'agg-0 exited with code 1: end of a']]);
  });
});
