import { beforeEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../../src/recipe/schema.js';
import check from '../../../src/doctor/checks/hf.locks.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { HfModelFacts } from '../../../src/host/types.js';
import type { RunRecord } from '../../../src/run/types.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

const root = '/home/u/.cache/huggingface/hub';
const dir = `${root}/models--Qwen--Qwen3-0.6B`;
const lockPath = `${root}/.locks/models--Qwen--Qwen3-0.6B/a6e0b3bc1d16fb1a5aff0b8b6bbd9d87e2bd3a4f.lock`;
const cached: HfModelFacts = {
  cacheRoot: root, model: 'Qwen/Qwen3-0.6B', modelDir: dir, snapshot: 'c1899de289a04d12100db370d81485cdf75e47ca',
  configPath: `${dir}/snapshots/c1899de289a04d12100db370d81485cdf75e47ca/config.json`, locks: [], incompleteBlobs: [], locksUnknown: false,
};
const notCached: HfModelFacts = { ...cached, modelDir: null, snapshot: null, configPath: null };
// Built before each test, not at module load: mutation testing counts code run at load as "static" and reruns every test for each such mutant.
let twoWorkers: Recipe;
beforeEach(() => {
  twoWorkers = recipeFrom({ workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 }] });
});

describe('hf.locks', () => {
  it('passes when the model is cached and no lock is held', async () => {
    const r = await check.run(fakeFacts({ hfModel: cached }));
    expect(r.status).toBe('pass');
    expect(r.summary).toContain('cached');
  });

  it('passes with an unheld leftover lock file, mentioning it', async () => {
    const r = await check.run(fakeFacts({ hfModel: { ...cached, locks: [{ path: lockPath, holders: [], mtimeMs: 0 }] } }));
    expect(r.status).toBe('pass');
    expect(r.details.join('\n')).toContain(lockPath);
    expect(r.details.join('\n')).toContain('no process holds it');
  });

  it('fails when a live process holds the lock, naming pid and command', async () => {
    const hf = {
      ...cached,
      locks: [{ path: lockPath, holders: [{ pid: 48211, cmd: 'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B' }], mtimeMs: Date.now() }],
      incompleteBlobs: [{ path: `${dir}/blobs/f47f.incomplete`, sizeBytes: 52428800, mtimeMs: Date.now() }],
    };
    const r = await check.run(fakeFacts({ hfModel: hf }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('download lock on Qwen/Qwen3-0.6B is held by pid 48211 (python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B)');
    expect(r.details[0]).toBe(`${lockPath} held by pid 48211 (python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B)`);
    expect(r.details[1]).toContain('50.0 MiB');
    expect(r.fix).toContain('kill 48211');
    expect(r.fix).toContain('Never delete a lock file');
  });

  it('a holder in another container (pid 0 in /proc/locks) still fails, and the fix never says `kill 0`', async () => {
    const hf = { ...cached, locks: [{ path: lockPath, holders: [{ pid: 0, cmd: null }], mtimeMs: Date.now() }] };
    const r = await check.run(fakeFacts({ hfModel: hf }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('download lock on Qwen/Qwen3-0.6B is held by a process not visible here (another container or PID namespace)');
    expect(r.fix).not.toMatch(/kill/);
    expect(r.fix).toContain(`fuser ${lockPath}`);
  });

  it('only warns when the holder is our own live run downloading', async () => {
    const hf = { ...cached, locks: [{ path: lockPath, holders: [{ pid: 6000, cmd: 'python3 -m dynamo.vllm' }], mtimeMs: Date.now() }] };
    const run = { record: { id: 'r1', processes: [] } as unknown as RunRecord, status: 'starting', live: true, pids: [6000], lost: [], logsDir: '/x' } satisfies RunView;
    const r = await check.run(fakeFacts({ hfModel: hf, run }));
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('being downloaded by the live run');
  });

  it('warns on an interrupted download (.incomplete, nobody holding a lock) with the resume command', async () => {
    const hf = { ...cached, incompleteBlobs: [{ path: `${dir}/blobs/f47f.incomplete`, sizeBytes: 1048576, mtimeMs: Date.now() - 3 * 3600_000 }] };
    const r = await check.run(fakeFacts({ hfModel: hf }));
    expect(r.status).toBe('warn');
    expect(r.summary).toContain('interrupted download');
    expect(r.details[0]).toBe(`${dir}/blobs/f47f.incomplete: 1.0 MiB, last written 3h ago`);
    expect(r.fix).toContain('hf download Qwen/Qwen3-0.6B');
  });

  it('warns when the model is not cached: several workers would race, fix is the download command', async () => {
    const r = await check.run(fakeFacts({ hfModel: notCached }, { recipe: twoWorkers }));
    expect(r.status).toBe('warn');
    expect(r.summary).toBe(`Qwen/Qwen3-0.6B is not cached yet (not in the cache at ${root})`);
    // up starts them one after another: the first downloads, the rest find it cached.
    expect(r.details[0]).toContain('up would download it with the first worker');
    expect(r.details[0]).not.toContain('race on the lock');
    expect(r.fix).toContain('hf download Qwen/Qwen3-0.6B');
    expect(r.fix).toContain('huggingface-cli download Qwen/Qwen3-0.6B');
  });

  it('skips a local model path', async () => {
    const recipe = recipeFrom({ model: '/models/qwen3' });
    const r = await check.run(fakeFacts({}, { recipe }));
    expect(r.status).toBe('skip');
  });

  it('warns when lock holders cannot be known', async () => {
    const r = await check.run(fakeFacts({ hfModel: { ...cached, locksUnknown: true, locks: [{ path: lockPath, holders: [], mtimeMs: 0 }] } }));
    expect(r.status).toBe('warn');
    expect(r.fix).toContain(`fuser ${lockPath}`);
  });
});
