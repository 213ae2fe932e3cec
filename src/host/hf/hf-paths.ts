import { homedir } from 'node:os';
import { join } from 'node:path';

// Hugging Face cache layout (FACTS §6). Pure path arithmetic; callers do the I/O.

/** $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub. */
export function hfCacheRoot(env: Readonly<Record<string, string | undefined>>): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, 'hub');
  return join(env.HOME || homedir(), '.cache', 'huggingface', 'hub');
}

/** Qwen/Qwen3-0.6B -> models--Qwen--Qwen3-0.6B */
export function modelFolderName(model: string): string {
  return `models--${model.split('/').join('--')}`;
}

export function modelDir(root: string, model: string): string {
  return join(root, modelFolderName(model));
}

export function modelLocksDir(root: string, model: string): string {
  return join(root, '.locks', modelFolderName(model));
}

/** A local folder or file path rather than a hub id. */
export function isLocalModelPath(model: string): boolean {
  return model.startsWith('/') || model.startsWith('.') || model.startsWith('~');
}
