import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../../src/errors.js';
import { findModelConfig } from '../../../src/host/hf/model-config.js';
import { FIXTURES } from '../../helpers/cli.js';

const QWEN = join(FIXTURES, 'configs', 'Qwen3-0.6B.config.json');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dd-hf-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** models--Qwen--Qwen3-0.6B with refs/main -> rev, config.json and a weight file linked into blobs/ like the hub does. */
function cacheModel(root: string, rev = 'c1899de289a04d12100db370d81485cdf75e47ca', weightBytes = 3 * 1024 * 1024) {
  const m = join(root, 'models--Qwen--Qwen3-0.6B');
  mkdirSync(join(m, 'refs'), { recursive: true });
  mkdirSync(join(m, 'blobs'), { recursive: true });
  mkdirSync(join(m, 'snapshots', rev), { recursive: true });
  writeFileSync(join(m, 'refs', 'main'), rev);
  copyFileSync(QWEN, join(m, 'snapshots', rev, 'config.json'));
  writeFileSync(join(m, 'blobs', 'f47f71'), Buffer.alloc(weightBytes));
  symlinkSync(join('..', '..', 'blobs', 'f47f71'), join(m, 'snapshots', rev, 'model.safetensors'));
  return join(m, 'snapshots', rev);
}

describe('findModelConfig', () => {
  it('reads config.json of refs/main from the HF cache, weights through the blob symlinks', async () => {
    const snap = cacheModel(join(dir, 'hub'));
    const r = await findModelConfig('Qwen/Qwen3-0.6B', { HF_HUB_CACHE: join(dir, 'hub') });
    expect(r.path).toBe(join(snap, 'config.json'));
    expect(r.config.num_hidden_layers).toBe(28);
    expect(r.weightsMiB).toBe(3);
  });

  it('follows HF_HOME/hub and falls back to the only snapshot without refs/main', async () => {
    const snap = cacheModel(join(dir, 'home', 'hub'));
    rmSync(join(dir, 'home', 'hub', 'models--Qwen--Qwen3-0.6B', 'refs'), { recursive: true });
    const r = await findModelConfig('Qwen/Qwen3-0.6B', { HF_HOME: join(dir, 'home') });
    expect(r.path).toBe(join(snap, 'config.json'));
  });

  it('takes a config.json path or a model folder; no weight files -> weightsMiB null', async () => {
    const r = await findModelConfig(QWEN, {});
    expect(r.path).toBe(QWEN);
    expect(r.weightsMiB).toBeNull();
    const folder = join(dir, 'model');
    mkdirSync(folder);
    copyFileSync(QWEN, join(folder, 'config.json'));
    writeFileSync(join(folder, 'pytorch_model.bin'), Buffer.alloc(1024 * 1024));
    expect((await findModelConfig(folder, {})).weightsMiB).toBe(1);
  });

  it('a model not in the cache: input error naming the searched path and the hf download command', async () => {
    const err = await findModelConfig('Qwen/Qwen3-0.6B', { HF_HUB_CACHE: join(dir, 'empty') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toContain(join(dir, 'empty', 'models--Qwen--Qwen3-0.6B'));
    expect((err as UserError).fix).toContain('hf download Qwen/Qwen3-0.6B');
  });

  it('invalid JSON and missing files are input errors naming the file', async () => {
    writeFileSync(join(dir, 'bad.json'), '{nope');
    await expect(findModelConfig(join(dir, 'bad.json'), {})).rejects.toThrow(/bad\.json: not valid JSON/);
    await expect(findModelConfig(join(dir, 'none.json'), {})).rejects.toThrow(/none\.json: no such file/);
  });
});
