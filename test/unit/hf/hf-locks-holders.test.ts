import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import check from '../../../src/doctor/checks/hf.locks.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { HfModelFacts } from '../../../src/host/types.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// hf.locks as the user reads it: who holds the download lock (never our own run named as the
// culprit), how old a partial download is, and the exact download command.
const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const ROOT = '/home/u/.cache/huggingface/hub';
const DIR = `${ROOT}/models--Qwen--Qwen3-0.6B`;
const LOCK = `${ROOT}/.locks/models--Qwen--Qwen3-0.6B/a6e0b3bc.lock`;
const LOCK2 = `${ROOT}/.locks/models--Qwen--Qwen3-0.6B/f47f.lock`;
const BLOB = `${DIR}/blobs/f47f.incomplete`;
const DOWNLOAD = 'hf download Qwen/Qwen3-0.6B   (older huggingface_hub: huggingface-cli download Qwen/Qwen3-0.6B)';
const WAITING = 'a worker started now would wait on this lock ("Still waiting to acquire lock on ...") instead of loading';
const UNHELD = (p: string) => `lock file ${p} exists but no process holds it (left by an earlier download; harmless)`;

const cached = (o: Partial<HfModelFacts> = {}): HfModelFacts => ({
  cacheRoot: ROOT, model: 'Qwen/Qwen3-0.6B', modelDir: DIR, snapshot: 'c1899de289a04d12100db370d81485cdf75e47ca',
  configPath: `${DIR}/snapshots/c1899de289a04d12100db370d81485cdf75e47ca/config.json`, locks: [], incompleteBlobs: [], locksUnknown: false, ...o,
});
const lock = (path: string, ...holders: [number, string | null][]) => ({ path, mtimeMs: NOW, holders: holders.map(([pid, cmd]) => ({ pid, cmd })) });
const blobAged = (seconds: number, sizeBytes = 52428800) => ({ path: BLOB, sizeBytes, mtimeMs: NOW - seconds * 1000 });
const liveRun = (...pids: number[]) => ({ record: { id: 'r1', processes: [] }, live: true, pids } as unknown as RunView);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('hf.locks: who holds the lock', () => {
  it('a lock held by us and one by a stranger names only the stranger', async () => {
    const hf = cached({ locks: [lock(LOCK, [6000, 'python3 -m dynamo.vllm']), lock(LOCK2, [7000, 'python3 fetch.py'])] });
    const r = await check.run(fakeFacts({ hfModel: hf, run: liveRun(6000) }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'download lock on Qwen/Qwen3-0.6B is held by pid 7000 (python3 fetch.py)',
      fix: 'wait for pid 7000 to finish downloading; if it is stuck, stop it (kill 7000) and run `hf download Qwen/Qwen3-0.6B`. Never delete a lock file a process holds',
      details: [`${LOCK} held by pid 6000 (python3 -m dynamo.vllm) (this run)`, `${LOCK2} held by pid 7000 (python3 fetch.py)`, WAITING],
    });
  });

  it('a run that is no longer live is not ours: its pid is named like any other', async () => {
    const hf = cached({ locks: [lock(LOCK, [6000, 'python3 -m dynamo.vllm'])] });
    const r = await check.run(fakeFacts({ hfModel: hf, run: { live: false, pids: [6000] } as unknown as RunView, liveRun: { live: false, pids: [6000] } as unknown as RunView }));
    expect(r.status).toBe('fail');
    expect(r.fix).toContain('kill 6000');
  });

  it('only our own run holding it: a warning to wait, with every holder and no "would wait" line', async () => {
    const hf = cached({ locks: [lock(LOCK, [6000, null], [6001, 'python3 -m dynamo.vllm'])], incompleteBlobs: [blobAged(30)] });
    const r = await check.run(fakeFacts({ hfModel: hf, run: liveRun(6000, 6001) }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: 'Qwen/Qwen3-0.6B is being downloaded by the live run (pid 6000, 6001)',
      fix: 'wait for the download to finish; next time run `hf download Qwen/Qwen3-0.6B` before `dynamo-dev up`',
      details: [
        `${LOCK} held by pid 6000 (command unknown) (this run), pid 6001 (python3 -m dynamo.vllm) (this run)`,
        `partial download ${BLOB}: 50.0 MiB, written 30s ago`,
      ],
    });
  });

  it('two strangers: the first is named with how many more, both are in the fix; one pid across two locks counts once', async () => {
    const hf = cached({ locks: [lock(LOCK, [7000, 'a'], [7001, null]), lock(LOCK2, [7000, 'a'])] });
    const r = await check.run(fakeFacts({ hfModel: hf }));
    expect(r.summary).toBe('download lock on Qwen/Qwen3-0.6B is held by pid 7000 (a) and 1 more');
    expect(r.fix).toBe('wait for pid 7000, 7001 to finish downloading; if it is stuck, stop it (kill 7000 7001) and run `hf download Qwen/Qwen3-0.6B`. Never delete a lock file a process holds');
    expect(r.details).toEqual([`${LOCK} held by pid 7000 (a), pid 7001 (command unknown)`, `${LOCK2} held by pid 7000 (a)`, WAITING]);
    const one = await check.run(fakeFacts({ hfModel: cached({ locks: [lock(LOCK, [7000, 'a']), lock(LOCK2, [7000, 'a'])] }) }));
    expect(one.summary).toBe('download lock on Qwen/Qwen3-0.6B is held by pid 7000 (a)');
  });

  it('a long command is cut to 60 characters in the verdict, never in the details', async () => {
    const sixty = `python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --served ${'x'.repeat(4)}`;
    expect(sixty).toHaveLength(60);
    const exact = await check.run(fakeFacts({ hfModel: cached({ locks: [lock(LOCK, [7000, sixty])] }) }));
    expect(exact.summary).toBe(`download lock on Qwen/Qwen3-0.6B is held by pid 7000 (${sixty})`);
    const longer = await check.run(fakeFacts({ hfModel: cached({ locks: [lock(LOCK, [7000, `${sixty}y`])] }) }));
    expect(longer.summary).toBe(`download lock on Qwen/Qwen3-0.6B is held by pid 7000 (${sixty.slice(0, 57)}...)`);
    expect(longer.details[0]).toBe(`${LOCK} held by pid 7000 (${sixty}y)`);
  });

  it('a holder without a known command is just its pid in the verdict', async () => {
    const r = await check.run(fakeFacts({ hfModel: cached({ locks: [lock(LOCK, [7000, null])] }) }));
    expect(r.summary).toBe('download lock on Qwen/Qwen3-0.6B is held by pid 7000');
    expect(r.details[0]).toBe(`${LOCK} held by pid 7000 (command unknown)`);
  });

  it('holders in another PID namespace (0) or with an OFD lock (-1) are never offered to kill', async () => {
    for (const pid of [0, -1]) {
      const r = await check.run(fakeFacts({ hfModel: cached({ locks: [lock(LOCK, [pid, null])] }) }));
      expect(r.summary, String(pid)).toBe('download lock on Qwen/Qwen3-0.6B is held by a process not visible here (another container or PID namespace)');
      expect(r.fix).toBe(
        `wait for the download to finish (the holder runs in another container or PID namespace sharing this cache: look there, e.g. \`fuser ${LOCK}\` on the host); then run \`hf download Qwen/Qwen3-0.6B\`. Never delete a lock file a process holds`,
      );
    }
    const mixed = await check.run(fakeFacts({ hfModel: cached({ locks: [lock(LOCK, [0, null], [7000, 'a'])] }) }));
    expect(mixed.summary).toBe('download lock on Qwen/Qwen3-0.6B is held by a process not visible here (another container or PID namespace) and 1 more');
    expect(mixed.fix).toMatch(/^wait for pid 7000 to finish downloading; if it is stuck, stop it \(kill 7000\)/);
  });
});

describe('hf.locks: how old a partial download is', () => {
  const ageOf = async (seconds: number) => {
    const r = await check.run(fakeFacts({ hfModel: cached({ incompleteBlobs: [blobAged(seconds, 1048576)] }) }));
    return r.details[0].replace(`${BLOB}: 1.0 MiB, last written `, '');
  };
  it('under two minutes in seconds; exactly two minutes in minutes', async () => {
    expect(await ageOf(119)).toBe('119s ago');
    expect(await ageOf(120)).toBe('2m ago');
  });
  it('under two hours in minutes; exactly two hours in hours', async () => {
    expect(await ageOf(7199)).toBe('120m ago');
    expect(await ageOf(7200)).toBe('2h ago');
    expect(await ageOf(3 * 3600 + 1799)).toBe('3h ago');
  });
  it('a file written "in the future" (clock skew) reads 0s, never negative', async () => {
    expect(await ageOf(-5)).toBe('0s ago');
  });
});

describe('hf.locks: nothing held', () => {
  it('an interrupted download warns with every partial file, leftover locks, and the resume command', async () => {
    const hf = cached({ incompleteBlobs: [blobAged(600, 3 * 1048576 + 524288)], locks: [lock(LOCK)] });
    const r = await check.run(fakeFacts({ hfModel: hf }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: 'interrupted download of Qwen/Qwen3-0.6B: 1 .incomplete blob(s) and no process downloading',
      fix: `${DOWNLOAD}   (resumes the partial files before workers start)`,
      details: [`${BLOB}: 3.5 MiB, last written 10m ago`, UNHELD(LOCK)],
    });
  });

  it('lock files with /proc/locks unreadable: cannot tell, says how to check by hand', async () => {
    const hf = cached({ locksUnknown: true, locks: [lock(LOCK), lock(LOCK2)] });
    const r = await check.run(fakeFacts({ hfModel: hf }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: '2 lock file(s) for Qwen/Qwen3-0.6B, and /proc/locks is unreadable: cannot tell whether a download is in progress',
      fix: `check with \`fuser ${LOCK}\`; if nothing holds it, run \`hf download Qwen/Qwen3-0.6B\``,
      details: [LOCK, LOCK2],
    });
  });

  it('/proc/locks unreadable but no lock file: nothing to doubt, a cached model passes', async () => {
    const r = await check.run(fakeFacts({ hfModel: cached({ locksUnknown: true }) }));
    expect(r.status).toBe('pass');
  });

  it('cached passes with the short snapshot id; leftover lock files are counted and listed', async () => {
    const r = await check.run(fakeFacts({ hfModel: cached() }));
    expect(r).toMatchObject({ status: 'pass', summary: 'Qwen/Qwen3-0.6B is cached (snapshot c1899de289a0), no lock held', details: [] });
    expect(r.evidence).toEqual({
      model: 'Qwen/Qwen3-0.6B', cacheRoot: ROOT, modelDir: DIR, snapshot: 'c1899de289a04d12100db370d81485cdf75e47ca',
      configPath: `${DIR}/snapshots/c1899de289a04d12100db370d81485cdf75e47ca/config.json`, locks: [], incompleteBlobs: [], locksUnknown: false,
    });
    const left = await check.run(fakeFacts({ hfModel: cached({ locks: [lock(LOCK)], snapshot: null }) }));
    expect(left).toMatchObject({ summary: 'Qwen/Qwen3-0.6B is cached (snapshot ?), no lock held, 1 unheld lock file(s) left', details: [UNHELD(LOCK)] });
  });
});

describe('hf.locks: not cached yet', () => {
  it('one worker downloads at start, counted against its readiness time', async () => {
    const r = await check.run(fakeFacts({ hfModel: cached({ modelDir: null, snapshot: null, configPath: null }) }));
    expect(r).toMatchObject({
      status: 'warn',
      summary: `Qwen/Qwen3-0.6B is not cached yet (not in the cache at ${ROOT})`,
      fix: DOWNLOAD,
      details: ['the worker would download it at start, counting the download against its readiness time', 'download it once before `dynamo-dev up`'],
    });
  });

  it('a model folder without config.json is not cached; workers started together would race on the lock', async () => {
    const recipe = recipeFrom({ startup: 'parallel', workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 }] } as never);
    const r = await check.run(fakeFacts({ hfModel: cached({ configPath: null, locks: [lock(LOCK)] }) }, { recipe }));
    expect(r.summary).toBe(`Qwen/Qwen3-0.6B is not cached yet (${DIR} has no snapshot with config.json)`);
    expect(r.details).toEqual([
      'the 2 workers of this recipe start together and would all download it and race on the lock: one downloads, the others wait ("Still waiting to acquire lock on ...") or fail ("Lock acquisition failed")',
      'download it once before `dynamo-dev up`',
      UNHELD(LOCK),
    ]);
  });

  it('workers started one after another: the first downloads, the rest find it cached', async () => {
    const recipe = recipeFrom({ workers: [{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.38 }] });
    const r = await check.run(fakeFacts({ hfModel: cached({ modelDir: null, configPath: null }) }, { recipe }));
    expect(r.details[0]).toBe(
      "up would download it with the first worker (the others start after its KV line, so they find it cached), counting the download against that worker's readiness time; a second process downloading it meanwhile makes one wait on the lock (\"Still waiting to acquire lock on ...\")",
    );
  });

  it('a local model path skips, with the path as evidence', async () => {
    for (const model of ['/models/qwen3', './qwen3', '~/models/qwen3']) {
      const recipe = recipeFrom({ model });
      const r = await check.run(fakeFacts({}, { recipe }));
      expect(r, model).toEqual({ status: 'skip', summary: `model is a local path (${model}): no hub download locks`, details: [], fix: null, evidence: { model } });
    }
  });
});
