import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { hfCacheRoot, isLocalModelPath, modelDir as modelDirOf, modelLocksDir } from './hf-paths.js';
import { readMainRef } from './refs.js';
import { parseProcLocks, splitDev, type ProcLock } from '../procs/parse-proc.js';
import { cmdOf, readText } from '../procs/proc-files.js';
import type { HfLockFile, HfModelFacts, LockHolder } from '../types.js';

// The model's state in the Hugging Face cache and who holds its download locks (FACTS §6).

type Env = Readonly<Record<string, string | undefined>>;

async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch {
    return [];
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Holders of the flock/POSIX locks on a file: /proc/locks entries whose MAJOR:MINOR:INODE equal
 * the file's. Waiters ("->" lines) do not hold the lock. Pure.
 */
export function holdersOf(locks: ProcLock[], file: { dev: bigint; ino: bigint }): number[] {
  const { major, minor } = splitDev(file.dev);
  const ino = file.ino.toString();
  const pids = locks.filter((l) => !l.blocked && l.major === major && l.minor === minor && l.inode === ino).map((l) => l.pid);
  return [...new Set(pids)];
}

/** The lock files under .locks/models--ORG--NAME, with their holders (when /proc/locks is readable). */
async function probeLocks(locksDir: string, procLocks: ProcLock[] | null): Promise<HfLockFile[]> {
  const names = (await listDir(locksDir)).filter((n) => n.endsWith('.lock')).sort();
  const files = await Promise.all(names.map(async (name): Promise<HfLockFile | null> => {
    const path = join(locksDir, name);
    let st;
    try {
      st = await stat(path, { bigint: true });
    } catch {
      return null; // released and deleted while we looked
    }
    const pids = procLocks ? holdersOf(procLocks, st) : [];
    const holders: LockHolder[] = await Promise.all(pids.map(async (pid) => ({ pid, cmd: await cmdOf(pid) })));
    return { path, holders, mtimeMs: Number(st.mtimeMs) };
  }));
  return files.filter((f): f is HfLockFile => f !== null);
}

/** blobs/<etag>.incomplete: partial downloads (a live download, or one that was interrupted). */
async function probeIncomplete(blobsDir: string): Promise<HfModelFacts['incompleteBlobs']> {
  const names = (await listDir(blobsDir)).filter((n) => n.endsWith('.incomplete')).sort();
  const blobs = await Promise.all(names.map(async (name) => {
    const path = join(blobsDir, name);
    try {
      const st = await stat(path);
      return { path, sizeBytes: st.size, mtimeMs: st.mtimeMs };
    } catch {
      return null; // completed (renamed) while we looked
    }
  }));
  return blobs.filter((b): b is NonNullable<typeof b> => b !== null);
}

/** Snapshot revision: refs/main, else the only folder under snapshots/ (a pinned revision). */
async function probeSnapshot(dir: string): Promise<string | null> {
  const ref = await readMainRef(dir);
  if (ref) return ref;
  const snaps = await listDir(join(dir, 'snapshots'));
  return snaps.length === 1 ? snaps[0] : null;
}

/**
 * Facts about `model` in the HF cache. A local model path has no hub locks: only its folder and
 * config.json are reported.
 */
export async function probeHfModel(model: string, env: Env): Promise<HfModelFacts> {
  const cacheRoot = hfCacheRoot(env);
  if (isLocalModelPath(model)) {
    const dir = resolve(model.startsWith('~') ? (env.HOME ?? '') + model.slice(1) : model);
    const config = join(dir, 'config.json');
    return {
      cacheRoot, model,
      modelDir: (await exists(dir)) ? dir : null,
      snapshot: null,
      configPath: (await exists(config)) ? config : null,
      locks: [], incompleteBlobs: [], locksUnknown: false,
    };
  }

  const dir = modelDirOf(cacheRoot, model);
  const procLocksText = await readText('/proc/locks');
  const procLocks = procLocksText === null ? null : parseProcLocks(procLocksText);
  const [dirExists, locks, incompleteBlobs] = await Promise.all([
    exists(dir),
    probeLocks(modelLocksDir(cacheRoot, model), procLocks),
    probeIncomplete(join(dir, 'blobs')),
  ]);
  const snapshot = dirExists ? await probeSnapshot(dir) : null;
  const config = snapshot ? join(dir, 'snapshots', snapshot, 'config.json') : null;
  return {
    cacheRoot,
    model,
    modelDir: dirExists ? dir : null,
    snapshot,
    configPath: config && (await exists(config)) ? config : null,
    locks,
    incompleteBlobs,
    locksUnknown: procLocks === null,
  };
}

/** Who holds the lock on one file (pid and command line); [] when nobody or /proc/locks is unreadable. */
export async function lockHolders(path: string): Promise<LockHolder[]> {
  const text = await readText('/proc/locks');
  if (text === null) return [];
  let st;
  try {
    st = await stat(path, { bigint: true });
  } catch {
    return [];
  }
  const pids = holdersOf(parseProcLocks(text), st);
  return Promise.all(pids.map(async (pid) => ({ pid, cmd: await cmdOf(pid) })));
}

/**
 * The held download locks of a hub model, both kinds a worker can wait on: huggingface_hub's
 * `<cache>/.locks/models--ORG--NAME/<etag>.lock` (vLLM's downloads; huggingface_hub 1.33.0
 * utils/_fixes.py WeakFileLock polls it and logs its wait only at INFO, which its WARNING-level
 * logger hides) and hf-hub's `<cache>/models--ORG--NAME/blobs/<etag>.lock` (Dynamo's own prefetch:
 * hf-hub 0.4.3 src/api/tokio.rs lock_file, flock LOCK_NB tried for ~5 s, then "Lock acquisition
 * failed: <path>"). Only files some process holds; [] for a local path or when /proc/locks is unreadable.
 */
export async function heldModelLocks(model: string, env: Env): Promise<HfLockFile[]> {
  if (isLocalModelPath(model)) return [];
  const text = await readText('/proc/locks');
  if (text === null) return [];
  const root = hfCacheRoot(env);
  const locks = parseProcLocks(text);
  const [hub, blobs] = await Promise.all([probeLocks(modelLocksDir(root, model), locks), probeLocks(join(modelDirOf(root, model), 'blobs'), locks)]);
  return [...hub, ...blobs].filter((l) => l.holders.length > 0);
}
