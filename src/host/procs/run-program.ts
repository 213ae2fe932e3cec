import { spawn, type ChildProcess } from 'node:child_process';

// Runs one external program of a probe (nvidia-smi, ucx_info, ldconfig, the Python interpreter)
// and collects its output. node:child_process directly: execa's import alone costs 50-90 ms of
// start-up on this kind of machine, on the critical path of every doctor run. Never throws: a
// missing program, a timeout and a crash are facts in the result.

type Env = Readonly<Record<string, string | undefined>>;

export interface ProgramResult {
  /** Exit code; null when it did not exit by itself (signal, timeout) or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Output as text, one trailing newline removed. */
  stdout: string;
  stderr: string;
  /** The program is not there (ENOENT). */
  notFound: boolean;
  /** Killed after timeoutMs. */
  timedOut: boolean;
  /** Why it could not be started (EACCES, ...), one line; null when it ran. */
  startError: string | null;
}

export interface RunOptions {
  /** The whole environment of the child (nothing is added from ours). */
  env: Env;
  timeoutMs: number;
}

const chomp = (s: string) => (s.endsWith('\r\n') ? s.slice(0, -2) : s.endsWith('\n') ? s.slice(0, -1) : s);

// Children still running when we exit (a check timed out and doctor is done) are killed, as execa did.
const running = new Set<ChildProcess>();
let exitHook = false;
function track(child: ChildProcess): void {
  running.add(child);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
}

/** Runs file with args (found on env.PATH), stdin closed; resolves once it has exited and its output is read. */
export function runProgram(file: string, args: readonly string[], o: RunOptions): Promise<ProgramResult> {
  return new Promise((resolve) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.env)) if (v !== undefined) env[k] = v;
    let child: ChildProcess;
    try {
      child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      resolve({ exitCode: null, signal: null, stdout: '', stderr: '', notFound: e.code === 'ENOENT', timedOut: false, startError: `${file}: ${e.code ?? e.message}` });
      return;
    }
    track(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    let timedOut = false;
    let failed: NodeJS.ErrnoException | null = null;
    let settled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs);
    const settle = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      running.delete(child);
      resolve({
        exitCode: failed || timedOut ? null : code,
        signal: failed || timedOut ? null : signal,
        stdout: chomp(Buffer.concat(out).toString('utf8')),
        stderr: chomp(Buffer.concat(err).toString('utf8')),
        notFound: failed?.code === 'ENOENT',
        timedOut,
        startError: failed ? `${file}: ${failed.code ?? failed.message}` : null,
      });
    };
    child.once('error', (e: NodeJS.ErrnoException) => {
      failed = e;
      if (child.pid === undefined) settle(null, null); // never started: no exit or close follows
    });
    // 'close' comes once the output is drained too. A grandchild that inherited the pipes could hold
    // them open long after the program exited: then its output so far is what there is.
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => settle(code, signal));
    child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      setTimeout(() => {
        if (settled) return;
        child.stdout!.destroy();
        child.stderr!.destroy();
        settle(code, signal);
      }, 200).unref();
    });
  });
}
