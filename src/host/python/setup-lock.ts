import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { envsRoot } from '../../plan/setup-install.js';
import { readBoundedSync } from '../files/bounded-read.js';
import { readStatSync } from '../procs/proc-files.js';

// One setup at a time per environment folder: the lock, who holds it, and what it left running.

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where setup's lock on building DIR lives: a folder of dynamo-dev's own beside envs/, named by a
 * hash of DIR. Never DIR.lock beside DIR, where uv.lock, poetry.lock or Cargo.lock may be.
 */
export function setupLockPath(env: Env, dir: string): string {
  const root = dirname(envsRoot(env, homedir()));
  return join(root, 'setup-locks', `${createHash('sha256').update(dir).digest('hex').slice(0, 24)}.lock`);
}

/** What a setup lock records: the setup (pid and start time: a reused pid is not it) and the installer it runs. */
interface LockRecord {
  pid: number;
  startTicks: number | null;
  dir: string;
  installer: { pid: number; startTicks: number } | null;
}

/** The process of that pid if it is still the one started at startTicks (null: it is gone, or the pid was reused). */
function stillRunning(pid: number, startTicks: number | null): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  const st = readStatSync(pid);
  if (!st || st.state === 'Z') return false;
  return startTicks === null || st.startTicks === startTicks;
}

function readLock(file: string): LockRecord | null {
  const r = readBoundedSync(file, { maxBytes: 4096 });
  if (!r.ok) return null;
  try {
    const j = JSON.parse(r.text) as Partial<LockRecord>;
    if (typeof j.pid !== 'number') return null;
    const inst = j.installer && typeof j.installer.pid === 'number' && typeof j.installer.startTicks === 'number' ? j.installer : null;
    return { pid: j.pid, startTicks: typeof j.startTicks === 'number' ? j.startTicks : null, dir: String(j.dir ?? ''), installer: inst };
  } catch {
    return null;
  }
}

export type FolderLock =
  | { ok: true; path: string; release: () => void; installerStarted: (pid: number) => void }
  | { ok: false; path: string; heldBy: number }
  | { ok: false; path: string; installerLeft: number };

/**
 * A lock on building one folder. A lock whose setup is gone (its pid ended, or now names another
 * process: the start time differs) is taken over, unless the installer that setup started (its
 * own process group) still runs: a setup killed outright (SIGKILL) cannot stop it, and rebuilding
 * the folder under a pip that still writes into it would mix two installs.
 */
export function lockFolder(dir: string, env: Env): FolderLock {
  const file = setupLockPath(env, dir);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const me: LockRecord = { pid: process.pid, startTicks: readStatSync(process.pid)?.startTicks ?? null, dir, installer: null };
  const write = (flag: 'wx' | 'w') => writeFileSync(file, `${JSON.stringify(me)}\n`, { flag, mode: 0o600 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      write('wx');
      return {
        ok: true, path: file,
        release: () => rmSync(file, { force: true }),
        installerStarted: (pid) => {
          const startTicks = readStatSync(pid)?.startTicks;
          if (startTicks === undefined) return;
          me.installer = { pid, startTicks };
          try {
            write('w');
          } catch {
            // the lock still holds; only a later setup's check of a left installer is lost
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = readLock(file);
      if (held && stillRunning(held.pid, held.startTicks)) return { ok: false, path: file, heldBy: held.pid };
      if (held?.installer && stillRunning(held.installer.pid, held.installer.startTicks)) return { ok: false, path: file, installerLeft: held.installer.pid };
      try {
        unlinkSync(file);
      } catch {
        // another setup took it over first
      }
    }
  }
  return { ok: false, path: file, heldBy: readLock(file)?.pid ?? 0 };
}

