import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import check, { judgeModelSource, modelFailureLine } from '../../../src/doctor/checks/model.available.js';
import { hubEndpoint, hubModelUrl, modelEnv, offlineBy, probeModelSource } from '../../../src/host/hf/model-source.js';
import type { ModelSourceFacts } from '../../../src/host/types.js';
import { fakeFacts } from '../../helpers/facts.js';

// model.available: the model can be read before anything starts (issue 25).

const root = '/home/u/.cache/huggingface/hub';
const snap = `${root}/models--Qwen--Qwen3-0.6B/snapshots/c1899de`;
type Hub = Extract<ModelSourceFacts, { kind: 'hub' }>;
type Local = Extract<ModelSourceFacts, { kind: 'local' }>;
const hub = (o: Partial<Hub> = {}): Hub => ({
  kind: 'hub', model: 'Qwen/Qwen3-0.6B', cacheRoot: root, snapshotDir: null, snapshotFiles: [], offline: null,
  endpoint: 'https://huggingface.co', hub: null, proxy: null, ...o,
});
const local = (o: Partial<Local> = {}): Local => ({ kind: 'local', model: './m', path: '/work/m', type: 'dir', files: [], error: null, ...o });
const FULL = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const asked = (status: number | null, error: string | null = null) => ({ url: 'https://huggingface.co/api/models/Qwen/Qwen3-0.6B', status, error });

describe('model.available: a local folder', () => {
  it('passes with config.json, tokenizer.json and weights', () => {
    const r = judgeModelSource(local({ files: FULL }), 'vllm');
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('model folder ./m (/work/m) has config.json and tokenizer.json');
  });

  it('fails when the path does not exist, naming it resolved, with a fix', () => {
    const r = judgeModelSource(local({ type: 'missing' }), 'vllm');
    expect(r.status).toBe('fail');
    expect(modelFailureLine(r)).toBe('model path ./m does not exist (/work/m); fix: fix the path (the recipe\'s model, or --model PATH) to a folder with config.json and tokenizer.json, or give a hub id such as Qwen/Qwen3-0.6B');
  });

  it('fails without config.json, listing what is there', () => {
    const r = judgeModelSource(local({ files: ['tokenizer.json', 'model.safetensors'] }), 'vllm');
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('model folder ./m (/work/m) has no config.json');
    expect(r.details).toEqual(['files there: tokenizer.json, model.safetensors']);
  });

  it('fails with config.json and no tokenizer at all; the fix names the folder', () => {
    const r = judgeModelSource(local({ files: ['config.json', 'model.safetensors', 'tokenizer_config.json'] }), 'vllm');
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('has config.json but no tokenizer (tokenizer.json, or tokenizer_config.json with its vocab files)');
    expect(r.fix).toMatch(/^copy the model's tokenizer.json and tokenizer_config.json into \/work\/m; or fix the path/);
  });

  it('warns for a tokenizer only vLLM loads (vocab.json + merges.txt, a SentencePiece model): the frontend needs tokenizer.json', () => {
    for (const files of [['config.json', 'model.safetensors', 'tokenizer_config.json', 'vocab.json', 'merges.txt'], ['config.json', 'model.safetensors', 'tokenizer.model']]) {
      const r = judgeModelSource(local({ files }), 'vllm');
      expect(r.status, files.join()).toBe('warn');
      expect(r.summary).toContain('Dynamo\'s frontend needs tokenizer.json');
      expect(r.fix).toContain('save_pretrained(\'/work/m\')');
    }
    // vocab.json alone is half a BPE tokenizer: nothing loads it.
    expect(judgeModelSource(local({ files: ['config.json', 'model.safetensors', 'vocab.json'] }), 'vllm').status).toBe('fail');
  });

  it('real snapshots holding tokenizer.json AND vocab.json + merges.txt pass without a warning (issue 29: the BPE pair must not shadow tokenizer.json)', () => {
    // The files of Qwen/Qwen3-0.6B's snapshot on the hub, and of a Llama-style one (tokenizer.json alone).
    const qwen = ['.gitattributes', 'LICENSE', 'README.md', 'config.json', 'generation_config.json', 'merges.txt', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'vocab.json'];
    const llama = ['.gitattributes', 'LICENSE.txt', 'README.md', 'USE_POLICY.md', 'config.json', 'generation_config.json', 'model.safetensors', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json'];
    for (const files of [qwen, llama]) {
      for (const r of [judgeModelSource(local({ files }), 'vllm'), judgeModelSource(hub({ snapshotDir: join(root, 'snap'), snapshotFiles: files }), 'vllm')]) {
        expect([files.length, r.status]).toEqual([files.length, 'pass']);
        expect(`${r.summary} ${(r.details ?? []).join(' ')}`).not.toMatch(/vLLM loads it|needs tokenizer\.json|warn/);
      }
    }
  });

  it('tiktoken files are the frontend\'s too', () => {
    expect(judgeModelSource(local({ files: ['config.json', 'model.safetensors', 'o200k.tiktoken'] }), 'vllm').status).toBe('pass');
    expect(judgeModelSource(local({ files: ['config.json', 'model.safetensors', 'tiktoken.model'] }), 'vllm').status).toBe('pass');
  });

  it('weights: a vLLM folder without any warns, the mocker needs none', () => {
    const files = ['config.json', 'tokenizer.json'];
    expect(judgeModelSource(local({ files }), 'vllm').status).toBe('warn');
    expect(judgeModelSource(local({ files }), 'mocker').status).toBe('pass');
  });

  it('a file: a GGUF passes, anything else fails', () => {
    expect(judgeModelSource(local({ model: './q.gguf', path: '/work/q.gguf', type: 'file' }), 'vllm').status).toBe('pass');
    const r = judgeModelSource(local({ model: './config.json', path: '/work/config.json', type: 'file' }), 'vllm');
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('is a file, not a model folder');
  });

  it('an unreadable path fails with the error', () => {
    const r = judgeModelSource(local({ type: 'unreadable', error: 'EACCES' }), 'vllm');
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('model path ./m cannot be read (EACCES)');
  });
});

describe('model.available: a hub id', () => {
  it('cached: passes without asking the hub', () => {
    const r = judgeModelSource(hub({ snapshotDir: snap, snapshotFiles: ['config.json'] }), 'vllm');
    expect(r.status).toBe('pass');
    expect(r.summary).toBe(`model Qwen/Qwen3-0.6B is in the Hugging Face cache (${snap})`);
  });

  it('offline and not cached: fails naming the variable, the cache and the download', () => {
    const r = judgeModelSource(hub({ offline: 'HF_HUB_OFFLINE=1' }), 'vllm');
    expect(r.status).toBe('fail');
    expect(modelFailureLine(r)).toBe(
      `model Qwen/Qwen3-0.6B is not in the Hugging Face cache (${root}) and HF_HUB_OFFLINE=1 forbids downloading it; ` +
      'fix: `hf download Qwen/Qwen3-0.6B` (older huggingface_hub: `huggingface-cli download Qwen/Qwen3-0.6B`) with the network (HF_HUB_OFFLINE unset), or point HF_HUB_CACHE at a cache that holds it',
    );
  });

  it('offline and cached whole: passes; a snapshot missing the tokenizer or (for vLLM) the weights fails', () => {
    expect(judgeModelSource(hub({ offline: 'HF_HUB_OFFLINE=1', snapshotDir: snap, snapshotFiles: FULL }), 'vllm').status).toBe('pass');
    const noTok = judgeModelSource(hub({ offline: 'HF_HUB_OFFLINE=1', snapshotDir: snap, snapshotFiles: ['config.json', 'model.safetensors'] }), 'vllm');
    expect(noTok.status).toBe('fail');
    expect(noTok.summary).toContain('forbids downloading the rest');
    const noWeights = judgeModelSource(hub({ offline: 'TRANSFORMERS_OFFLINE=1', snapshotDir: snap, snapshotFiles: ['config.json', 'tokenizer.json'] }), 'vllm');
    expect(noWeights.status).toBe('fail');
    expect(noWeights.summary).toContain('has no weights and TRANSFORMERS_OFFLINE=1 forbids downloading them');
    expect(judgeModelSource(hub({ offline: 'HF_HUB_OFFLINE=1', snapshotDir: snap, snapshotFiles: ['config.json', 'tokenizer.json'] }), 'mocker').status).toBe('pass');
  });

  it('not cached, the hub answers 200: passes (the first worker downloads it)', () => {
    const r = judgeModelSource(hub({ hub: asked(200) }), 'vllm');
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('the hub has it');
  });

  it('not cached, the hub cannot be reached: fails with the reason and the download', () => {
    const r = judgeModelSource(hub({ hub: asked(null, 'connection refused'), endpoint: 'http://127.0.0.1:9999' }), 'vllm');
    expect(r.status).toBe('fail');
    expect(r.summary).toBe(`model Qwen/Qwen3-0.6B is not in the Hugging Face cache (${root}) and the hub cannot be reached (http://127.0.0.1:9999: connection refused)`);
    expect(r.fix).toContain('hf download Qwen/Qwen3-0.6B');
  });

  it('unreachable directly with a proxy set: warns (the worker goes through the proxy, our request does not)', () => {
    const r = judgeModelSource(hub({ hub: asked(null, 'no answer within 3000 ms'), proxy: 'HTTPS_PROXY' }), 'vllm');
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('HTTPS_PROXY is set');
  });

  it('404 fails (no such id); 401/403 warn (private or gated); other answers warn', () => {
    expect(judgeModelSource(hub({ hub: asked(404) }), 'vllm').status).toBe('fail');
    for (const s of [401, 403]) {
      const r = judgeModelSource(hub({ hub: asked(s) }), 'vllm');
      expect(r.status).toBe('warn');
      expect(r.fix).toContain('HF_TOKEN');
    }
    expect(judgeModelSource(hub({ hub: asked(503) }), 'vllm').status).toBe('warn');
    expect(judgeModelSource(hub({ hub: asked(302) }), 'vllm').status).toBe('pass');
  });

  it('the embedded model passes with nothing to ask', () => {
    expect(judgeModelSource({ kind: 'embedded', model: 'dynamo-dev/tiny', dir: '/pkg/models/tiny' }, 'mocker').status).toBe('pass');
  });

  it('as a doctor check, it judges facts.modelSource', async () => {
    const r = await check.run(fakeFacts({ modelSource: hub({ offline: 'HF_HUB_OFFLINE=1' }) }));
    expect(check.id).toBe('model.available');
    expect(r.status).toBe('fail');
  });
});

describe('model-source: huggingface_hub\'s own rules', () => {
  it('offline: HF_HUB_OFFLINE, else TRANSFORMERS_OFFLINE, true for 1/ON/YES/TRUE in any case; a set HF_HUB_OFFLINE hides the other', () => {
    expect(offlineBy({ HF_HUB_OFFLINE: '1' })).toBe('HF_HUB_OFFLINE=1');
    expect(offlineBy({ HF_HUB_OFFLINE: 'true' })).toBe('HF_HUB_OFFLINE=true');
    expect(offlineBy({ TRANSFORMERS_OFFLINE: 'yes' })).toBe('TRANSFORMERS_OFFLINE=yes');
    expect(offlineBy({ HF_HUB_OFFLINE: '0', TRANSFORMERS_OFFLINE: '1' })).toBeNull();
    expect(offlineBy({ HF_HUB_OFFLINE: '', TRANSFORMERS_OFFLINE: '1' })).toBe('TRANSFORMERS_OFFLINE=1');
    expect(offlineBy({ HF_HUB_OFFLINE: '2' })).toBeNull();
    expect(offlineBy({})).toBeNull();
  });

  it('endpoint: HF_ENDPOINT without a trailing slash, else the public hub; the model URL escapes each part', () => {
    expect(hubEndpoint({})).toBe('https://huggingface.co');
    expect(hubEndpoint({ HF_ENDPOINT: 'http://mirror.local:8080/' })).toBe('http://mirror.local:8080');
    expect(hubModelUrl({ HF_ENDPOINT: 'http://m' }, 'Qwen/Qwen3-0.6B')).toBe('http://m/api/models/Qwen/Qwen3-0.6B');
    expect(hubModelUrl({}, 'a b/c')).toBe('https://huggingface.co/api/models/a%20b/c');
  });

  it('the recipe\'s first worker\'s env counts (HF_HUB_OFFLINE set there)', () => {
    expect(modelEnv({ A: '1' }, { workers: [{ env: { HF_HUB_OFFLINE: '1' } }] })).toEqual({ A: '1', HF_HUB_OFFLINE: '1' });
  });

  it('probes a real cache layout: refs/main\'s snapshot with config.json; a folder; a missing path; no hub asked offline', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dd-model-source-'));
    try {
      const m = join(dir, 'hub', 'models--Qwen--Qwen3-0.6B');
      mkdirSync(join(m, 'snapshots', 'aaa'), { recursive: true });
      mkdirSync(join(m, 'snapshots', 'bbb'), { recursive: true });
      mkdirSync(join(m, 'refs'), { recursive: true });
      writeFileSync(join(m, 'refs', 'main'), 'bbb\n');
      for (const s of ['aaa', 'bbb']) writeFileSync(join(m, 'snapshots', s, 'config.json'), '{}');
      writeFileSync(join(m, 'snapshots', 'bbb', 'tokenizer.json'), '{}');
      const cached = await probeModelSource('Qwen/Qwen3-0.6B', { HF_HUB_CACHE: join(dir, 'hub'), HF_HUB_OFFLINE: '1' });
      expect(cached).toMatchObject({ kind: 'hub', snapshotDir: join(m, 'snapshots', 'bbb'), snapshotFiles: ['config.json', 'tokenizer.json'], offline: 'HF_HUB_OFFLINE=1', hub: null });
      const other = await probeModelSource('Qwen/Other', { HF_HUB_CACHE: join(dir, 'hub'), HF_HUB_OFFLINE: '1' });
      expect(other).toMatchObject({ kind: 'hub', snapshotDir: null, hub: null });
      expect(await probeModelSource(m, {})).toMatchObject({ kind: 'local', type: 'dir', files: ['refs', 'snapshots'] });
      expect(await probeModelSource('./no-such-model', {}, { cwd: dir })).toMatchObject({ kind: 'local', type: 'missing', path: join(dir, 'no-such-model') });
      expect(await probeModelSource('~/m', { HOME: dir })).toMatchObject({ kind: 'local', path: join(dir, 'm'), type: 'missing' });
      expect(await probeModelSource('dynamo-dev/tiny', {})).toMatchObject({ kind: 'embedded' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
