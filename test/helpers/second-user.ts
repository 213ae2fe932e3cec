import { execa } from 'execa';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, type CliResult } from './cli.js';
import { killHomeProcesses } from './home-processes.js';

// Cross-user cases run as root (as CI does) and act as a second user through setpriv: another
// uid with its own group and no supplementary groups.

/** nobody/nogroup: exists on every Debian and Ubuntu system. */
export const OTHER_UID = 65534;

export function assertRoot(): void {
  if (process.getuid?.() !== 0) throw new Error('cross-user tests run as root (as CI does): they act as a second user through setpriv');
}

/** argv prefix that runs a program as OTHER_UID. */
export const asOther = (uid = OTHER_UID) => ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];

/** A temp dir owned by the other user (mode 0700), removed by cleanup() (its processes stopped first). */
export function otherHome(prefix = 'dd-other-', uid = OTHER_UID): { dir: string; stateDir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chownSync(dir, uid, uid);
  const stateDir = join(dir, 'state');
  return {
    dir,
    stateDir,
    cleanup: () => {
      killHomeProcesses(stateDir); // as tempHome's: whatever of the home still runs goes before the folder
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The built CLI run as another user. */
export async function runCliAs(uid: number, args: string[], env: Record<string, string | undefined>, o: { timeoutMs?: number } = {}): Promise<CliResult> {
  const t0 = performance.now();
  const [cmd, ...pre] = asOther(uid);
  const r = await execa(cmd, [...pre, process.execPath, BIN, ...args], {
    env, extendEnv: false, reject: false, timeout: o.timeoutMs ?? 20_000, cwd: ROOT, stdin: 'ignore',
  });
  return { code: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr, durationMs: performance.now() - t0 };
}
