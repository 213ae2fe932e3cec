import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { readMainRef } from './refs.js';
import { EMBEDDED_MODEL_DIR, isEmbeddedModel } from '../../plan/embedded-model.js';
import { hfCacheRoot, isLocalModelPath, modelDir } from './hf-paths.js';
import type { ModelSourceFacts } from '../types.js';

// Where the recipe's model would come from, read before anything starts: the local folder's files,
// or the Hugging Face cache's snapshot and, when the model is not cached, whether the hub answers
// for it. Judged by doctor/checks/model.available.ts.

type Env = Readonly<Record<string, string | undefined>>;

/** The environment a worker starts with, as far as the model goes: ours, then the recipe's first worker's own (HF_HUB_OFFLINE, HF_ENDPOINT may be set there). Pure. */
export function modelEnv(env: Env, recipe: { workers: readonly { env?: Readonly<Record<string, string>> }[] }): Record<string, string | undefined> {
  return { ...env, ...(recipe.workers[0]?.env ?? {}) };
}

/** How long the hub may take to answer the HEAD: a start must not wait on a dead network. */
export const HUB_TIMEOUT_MS = 3000;

/**
 * huggingface_hub's own rule (1.33.0 constants.py): `_is_true(os.environ.get("HF_HUB_OFFLINE") or
 * os.environ.get("TRANSFORMERS_OFFLINE"))`, true for 1/ON/YES/TRUE in any case. A non-empty
 * HF_HUB_OFFLINE (even "0") hides TRANSFORMERS_OFFLINE, as there. Pure.
 */
export function offlineBy(env: Env): string | null {
  const hub = env.HF_HUB_OFFLINE;
  const value = hub || env.TRANSFORMERS_OFFLINE;
  if (!value || !['1', 'ON', 'YES', 'TRUE'].includes(value.toUpperCase())) return null;
  return hub ? `HF_HUB_OFFLINE=${hub}` : `TRANSFORMERS_OFFLINE=${value}`;
}

/** huggingface_hub's endpoint: HF_ENDPOINT without its trailing slash, else the public hub (constants.py ENDPOINT). Pure. */
export function hubEndpoint(env: Env): string {
  return (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
}

/** The model's metadata URL on the hub: <endpoint>/api/models/<org>/<name> (each part escaped). Pure. */
export function hubModelUrl(env: Env, model: string): string {
  return `${hubEndpoint(env)}/api/models/${model.split('/').map(encodeURIComponent).join('/')}`;
}

const PROXY_VARS = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'];

async function list(dir: string): Promise<string[] | null> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return null;
  }
}

/** The cached snapshot with config.json: refs/main's, else the first one that has it. */
async function cachedSnapshot(dir: string): Promise<{ dir: string; files: string[] } | null> {
  const snaps = await list(join(dir, 'snapshots'));
  if (!snaps || snaps.length === 0) return null;
  const main = await readMainRef(dir);
  const order = main && snaps.includes(main) ? [main, ...snaps.filter((s) => s !== main)] : snaps;
  for (const rev of order) {
    const files = await list(join(dir, 'snapshots', rev));
    if (files?.includes('config.json')) return { dir: join(dir, 'snapshots', rev), files };
  }
  return null;
}

/**
 * A URL with its user:password@ as `***@`: HF_ENDPOINT may carry a mirror's credentials, which
 * are never printed (nor put in --json). Pure; a text that is no URL comes back as it is.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1***@');
  } catch {
    return url;
  }
}

/**
 * HEAD the hub's model URL with a short timeout. Credentials are sent as huggingface_hub sends
 * them (it calls requests, whose prepare_auth takes user:password from the URL as HTTP Basic
 * auth, set after, and so over, the Bearer header of HF_TOKEN; _auth.py get_token): fetch itself
 * refuses a URL with credentials, which made a reachable mirror "unreachable", its password printed.
 */
async function askHub(url: string, env: Env, timeoutMs: number): Promise<{ url: string; status: number | null; error: string | null }> {
  const token = env.HF_TOKEN || env.HUGGING_FACE_HUB_TOKEN;
  const shown = redactUrl(url);
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  let target = url;
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
      u.username = '';
      u.password = '';
      target = u.toString();
    }
  } catch {
    // not a URL: fetch says so below
  }
  try {
    const res = await fetch(target, { method: 'HEAD', redirect: 'follow', signal: AbortSignal.timeout(timeoutMs), headers });
    return { url: shown, status: res.status, error: null };
  } catch (err) {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return { url: shown, status: null, error: `no answer within ${timeoutMs} ms` };
    const code = e?.cause?.code;
    const error = code === 'ECONNREFUSED' ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? `cannot resolve ${new URL(target).hostname} (${code})`
      : code ?? e?.cause?.message ?? e?.message ?? String(err);
    return { url: shown, status: null, error: redactUrl(error).split(url).join(shown) };
  }
}

/** Facts about where `model` comes from. `env`: the worker's environment (HF_* as the worker sees them). */
export async function probeModelSource(model: string, env: Env, o: { cwd?: string; timeoutMs?: number } = {}): Promise<ModelSourceFacts> {
  if (isEmbeddedModel(model)) return { kind: 'embedded', model, dir: EMBEDDED_MODEL_DIR };
  if (isLocalModelPath(model)) {
    const path = model.startsWith('~') ? join(env.HOME ?? '', model.slice(1)) : resolve(o.cwd ?? process.cwd(), model);
    try {
      const st = await stat(path);
      if (!st.isDirectory()) return { kind: 'local', model, path, type: 'file', files: [], error: null };
      const files = await list(path);
      return files === null
        ? { kind: 'local', model, path, type: 'unreadable', files: [], error: 'cannot list the folder' }
        : { kind: 'local', model, path, type: 'dir', files, error: null };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException)?.code;
      return code === 'ENOENT' || code === 'ENOTDIR'
        ? { kind: 'local', model, path, type: 'missing', files: [], error: null }
        : { kind: 'local', model, path, type: 'unreadable', files: [], error: code ?? String(err) };
    }
  }
  const cacheRoot = hfCacheRoot(env);
  const snap = await cachedSnapshot(modelDir(cacheRoot, model));
  const offline = offlineBy(env);
  const proxy = PROXY_VARS.find((v) => env[v]) ?? null;
  const hub = snap || offline ? null : await askHub(hubModelUrl(env, model), env, o.timeoutMs ?? HUB_TIMEOUT_MS);
  return {
    kind: 'hub', model, cacheRoot, snapshotDir: snap?.dir ?? null, snapshotFiles: snap?.files ?? [], offline,
    endpoint: redactUrl(hubEndpoint(env)), hub, proxy,
  };
}
