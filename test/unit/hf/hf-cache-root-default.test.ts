import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hfCacheRoot, modelDir } from '../../../src/host/hf/hf-paths.js';

// Where huggingface_hub keeps models when nothing is configured (FACTS §6): doctor looks for the
// model and its download locks there, so a wrong folder reads as "not downloaded" and misses locks.
describe('the Hugging Face cache root with neither HF_HUB_CACHE nor HF_HOME set', () => {
  it('is ~/.cache/huggingface/hub of $HOME', () => {
    expect(hfCacheRoot({ HOME: '/home/ana' })).toBe('/home/ana/.cache/huggingface/hub');
    expect(modelDir(hfCacheRoot({ HOME: '/home/ana' }), 'Qwen/Qwen3-0.6B')).toBe('/home/ana/.cache/huggingface/hub/models--Qwen--Qwen3-0.6B');
  });

  it('without $HOME, of the account\'s home folder', () => {
    expect(hfCacheRoot({})).toBe(`${homedir()}/.cache/huggingface/hub`);
  });

  it('HF_HUB_CACHE wins over HF_HOME, and HF_HOME over $HOME', () => {
    expect(hfCacheRoot({ HOME: '/home/ana', HF_HOME: '/data/hf', HF_HUB_CACHE: '/fast/hub' })).toBe('/fast/hub');
    expect(hfCacheRoot({ HOME: '/home/ana', HF_HOME: '/data/hf' })).toBe('/data/hf/hub');
  });
});
