import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScanResult } from '../../../src/diagnose/types.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';
import { tempHome } from '../../helpers/cli.js';

// `diagnose` of a run with a process that exited badly reads that log's last line only when no
// error finding explains it (a 100 MB log of a known failure is not opened again), a warning alone
// explains nothing, and a process killed mid-write still has its last (unterminated) line quoted.

const reads = vi.hoisted(() => [] as string[]);
vi.mock('../../../src/run/log-read.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../../../src/run/log-read.js')>();
  return { ...orig, tailFile: (path: string, ...rest: Parameters<typeof orig.tailFile> extends [string, ...infer R] ? R : never) => (reads.push(path), orig.tailFile(path, ...rest)) };
});
const { addExitFindings } = await import('../../../src/run/exit-findings.js');

const h = tempHome('dd-exit-reads-');
afterAll(() => h.cleanup());
beforeEach(() => {
  reads.length = 0;
});

const proc = (log: string): ProcessRecord => ({
  name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 1, startedAt: null, argv: [], env: {}, ports: {}, gpuMemoryUtilization: null,
  state: 'failed', kvTokens: null, exitCode: 1, signal: null, log, descendants: [],
});
const run = (processes: ProcessRecord[]): RunRecord => ({ id: 'r1', processes } as unknown as RunRecord);
const scanWith = (log: string, byFile: NonNullable<ScanResult['byFile']>[string]): ScanResult => ({
  files: 1, bytes: 0, findings: [], kvTokens: { [log]: null }, byFile: { [log]: byFile },
});

describe('which logs of badly ended processes diagnose reads again', () => {
  it('a log an error signature explains is never opened for its last line', async () => {
    const log = join(h.dir, 'oom.log');
    writeFileSync(log, 'torch.OutOfMemoryError: CUDA out of memory\nlast\n');
    const out = await addExitFindings(scanWith(log, [{ code: 'cuda.oom', severity: 'error', count: 1, line: 1, text: 'torch.OutOfMemoryError: CUDA out of memory' }]), run([proc(log)]));
    expect(reads).toEqual([]);
    expect(out.findings[0]).toMatchObject({ code: 'run.process-exited', text: 'agg-0 exited with code 1: torch.OutOfMemoryError: CUDA out of memory' });
  });

  it('a log with only a warning is read: its last line is what the finding quotes', async () => {
    const log = join(h.dir, 'warn.log');
    writeFileSync(log, 'WARNING slow download\nRuntimeError: boom\n');
    const out = await addExitFindings(scanWith(log, [{ code: 'hf.slow', severity: 'warn', count: 1, line: 1, text: 'WARNING slow download' }]), run([proc(log)]));
    expect(reads).toEqual([log]);
    expect(out.findings.find((f) => f.code === 'run.process-exited')).toMatchObject({ line: 2, text: 'agg-0 exited with code 1: RuntimeError: boom' });
  });

  it('a last line without its newline (the process was killed mid-write) is quoted', async () => {
    const log = join(h.dir, 'cut.log');
    writeFileSync(log, 'loading weights\nRuntimeError: CUDA error: an illegal mem');
    const out = await addExitFindings(scanWith(log, []), run([proc(log)]));
    expect(out.findings[0]).toMatchObject({ line: 2, text: 'agg-0 exited with code 1: RuntimeError: CUDA error: an illegal mem' });
  });
});
