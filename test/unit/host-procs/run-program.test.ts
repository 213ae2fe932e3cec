import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProgram } from '../../../src/host/procs/run-program.js';
import { readStartTicks } from '../../../src/run/proc.js';

// The runner every probe's external program goes through: output, exit, and every way it can fail.

const env = { PATH: process.env.PATH, LC_ALL: 'C' };

describe('runProgram', () => {
  it('collects stdout and stderr (one trailing newline off) and the exit code; stdin is closed', async () => {
    const r = await runProgram('bash', ['-c', 'echo out; echo err >&2; cat; exit 3'], { env, timeoutMs: 5000 });
    expect(r).toEqual({ exitCode: 3, signal: null, stdout: 'out', stderr: 'err', notFound: false, timedOut: false, startError: null });
  });

  it('passes exactly the given environment', async () => {
    const r = await runProgram('bash', ['-c', 'echo "${ONLY_THIS:-none} ${HOME:-nohome}"'], { env: { ...env, ONLY_THIS: 'yes', HOME: undefined }, timeoutMs: 5000 });
    expect(r.stdout).toBe('yes nohome');
  });

  it('a program that is not there: notFound, no throw', async () => {
    const r = await runProgram('dd-no-such-program', [], { env, timeoutMs: 5000 });
    expect(r).toMatchObject({ exitCode: null, notFound: true, timedOut: false });
  });

  it('a program that cannot be run (not executable): startError, not notFound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dd-run-'));
    writeFileSync(join(dir, 'plain'), 'echo hi\n', { mode: 0o644 });
    const r = await runProgram(join(dir, 'plain'), [], { env, timeoutMs: 5000 });
    rmSync(dir, { recursive: true, force: true });
    expect(r.notFound).toBe(false);
    expect(r.startError).toMatch(/EACCES/);
  });

  it('a hang is killed at the timeout and reported; the process is gone', async () => {
    const t0 = performance.now();
    const r = await runProgram('bash', ['-c', 'echo $$; exec sleep 30'], { env, timeoutMs: 300 });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(r).toMatchObject({ timedOut: true, exitCode: null });
    expect(readStartTicks(Number(r.stdout))).toBeNull();
  });

  it('killed by a signal: exitCode null with the signal', async () => {
    const r = await runProgram('bash', ['-c', 'kill -SEGV $$'], { env, timeoutMs: 5000 });
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGSEGV', timedOut: false });
  });

  it('a background grandchild holding the output open does not hold up the answer', async () => {
    const t0 = performance.now();
    const r = await runProgram('bash', ['-c', 'echo done; (sleep 5; echo late) & echo $! >&2'], { env, timeoutMs: 8000 });
    expect(performance.now() - t0).toBeLessThan(2500);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'done' });
    process.kill(Number(r.stderr), 'SIGKILL');
  });
});
