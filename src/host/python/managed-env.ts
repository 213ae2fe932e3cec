import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readBoundedSync } from '../files/bounded-read.js';
import { envPython, envsRoot, MARKER_FILE, parseMarker, type EnvMarker } from '../../plan/setup-install.js';

// The environments `dynamo-dev setup` made, read from their marker files (setup writes the marker
// last and atomically, so a folder without one is an interrupted or failed build and never counts).

type Env = Readonly<Record<string, string | undefined>>;

export interface ManagedEnv {
  dir: string;
  marker: EnvMarker;
  /** The environment's interpreter (bin/python). */
  python: string;
}

/** The complete environment in dir, or null (no marker, a torn one, or no interpreter). */
export function readManagedEnv(dir: string): ManagedEnv | null {
  // A folder someone named (--dir): its marker may be a FIFO, a link or huge; only a small regular file counts.
  const read = readBoundedSync(join(dir, MARKER_FILE), { maxBytes: 64 * 1024 });
  if (!read.ok) return null;
  const marker = parseMarker(read.text);
  const python = envPython(dir);
  return marker && existsSync(python) ? { dir, marker, python } : null;
}

/** Every complete environment under envs/, in folder-name order (no order of preference). */
export function listManagedEnvs(env: Env): ManagedEnv[] {
  const root = envsRoot(env, homedir());
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names.sort().map((n) => readManagedEnv(join(root, n))).filter((e): e is ManagedEnv => e !== null);
}
