import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { readBounded } from '../files/bounded-read.js';
import { readMainRef } from './refs.js';
import { UserError } from '../../errors.js';
import { hfCacheRoot, modelDir } from './hf-paths.js';

// Finds a model's config.json offline: a path to config.json, a model folder, or a hub id in the
// HF cache (FACTS §6: models--ORG--NAME/snapshots/REV/config.json, REV from refs/main).

export interface ModelConfig {
  config: Record<string, unknown>;
  /** The config.json read. */
  path: string;
  /** Total size of the weight files beside it (*.safetensors, else *.bin), in MiB; null if none. */
  weightsMiB: number | null;
}

const MIB = 1024 * 1024;

export async function findModelConfig(modelOrPath: string, env: Readonly<Record<string, string | undefined>>): Promise<ModelConfig> {
  const local = await stat(modelOrPath).catch(() => null);
  if (local) {
    const path = local.isDirectory() ? join(modelOrPath, 'config.json') : modelOrPath;
    return { config: await readConfig(path), path, weightsMiB: await weightsMiB(dirname(path)) };
  }
  if (modelOrPath.endsWith('.json') || modelOrPath.startsWith('/') || modelOrPath.startsWith('.')) {
    throw new UserError(`${modelOrPath}: no such file; pass a config.json, a model folder or a model id in the HF cache`);
  }
  const root = hfCacheRoot(env);
  const dir = modelDir(root, modelOrPath);
  const snapshot = await findSnapshot(dir);
  const path = snapshot ? join(snapshot, 'config.json') : null;
  if (!path || !(await stat(path).catch(() => null))) {
    throw new UserError(
      `${modelOrPath}: no config.json in the HF cache (searched ${dir}/snapshots)`,
      `hf download ${modelOrPath} config.json   (or pass a path to config.json; set HF_HUB_CACHE or HF_HOME if your cache lives elsewhere)`,
    );
  }
  return { config: await readConfig(path), path, weightsMiB: await weightsMiB(snapshot!) };
}

/** snapshots/<refs/main>, else the only snapshot, else the most recently modified one. */
async function findSnapshot(dir: string): Promise<string | null> {
  const ref = await readMainRef(dir);
  if (ref && (await stat(join(dir, 'snapshots', ref)).catch(() => null))) return join(dir, 'snapshots', ref);
  const names = await readdir(join(dir, 'snapshots')).catch(() => [] as string[]);
  let best: { path: string; mtime: number } | null = null;
  for (const n of names) {
    const p = join(dir, 'snapshots', n);
    const st = await stat(p).catch(() => null);
    if (st?.isDirectory() && (!best || st.mtimeMs > best.mtime)) best = { path: p, mtime: st.mtimeMs };
  }
  return best?.path ?? null;
}

/** A config.json is a few KB; a device or a giant file is refused before it is read. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

async function readConfig(path: string): Promise<Record<string, unknown>> {
  // Snapshot files are links into blobs/ by design: followed, but never a FIFO, a device or a giant file.
  const read = await readBounded(path, { maxBytes: MAX_CONFIG_BYTES, follow: true });
  if (!read.ok) {
    if (read.why === 'not-a-file') throw new UserError(`${path}: not a regular file; pass a config.json, a model folder or a model id in the HF cache`);
    if (read.why === 'too-large') throw new UserError(`${path}: ${read.message} for a config.json`);
    throw new UserError(`${path}: ${read.why === 'absent' ? 'cannot read (ENOENT)' : read.message}`);
  }
  const text = read.text;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new UserError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UserError(`${basename(path)}: expected a JSON object (${path})`);
  return v as Record<string, unknown>;
}

/** Sizes follow symlinks (HF snapshots link into blobs/). Safetensors win over .bin duplicates. */
async function weightsMiB(dir: string): Promise<number | null> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const ext of ['.safetensors', '.bin']) {
    const files = names.filter((n) => n.endsWith(ext) && !n.startsWith('training_args'));
    if (files.length === 0) continue;
    let bytes = 0;
    for (const f of files) bytes += (await stat(join(dir, f)).catch(() => null))?.size ?? 0;
    if (bytes > 0) return bytes / MIB;
  }
  return null;
}

/** What the plan's KV estimate needs from the cached model; null when not cached or odd. */
export async function modelKvInfo(model: string, env: NodeJS.ProcessEnv): Promise<{ bytesPerToken: number; weightsMiB: number | null } | null> {
  const { kvBytesPerToken, kvShapeFromConfig } = await import('../../plan/kv-math.js');
  try {
    const cfg = await findModelConfig(model, env);
    return { bytesPerToken: kvBytesPerToken(kvShapeFromConfig(cfg.config, cfg.path)), weightsMiB: cfg.weightsMiB };
  } catch {
    return null; // not cached, or an odd config.json: only the estimate is lost
  }
}
