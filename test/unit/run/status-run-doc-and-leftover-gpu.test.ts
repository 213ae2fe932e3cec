import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRunStatus, collectStatus, withLeftoverMemory, type RunStatusDoc } from '../../../src/run/status-doc.js';
import type { RunLiveness } from '../../../src/run/liveness.js';
import { markerFor, RUN_MARKER } from '../../../src/run/run-scan.js';
import type { ProcessRecord, RunRecord } from '../../../src/run/types.js';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { deadPid, killStarted, spawnLone, spawnTree, writeFakeRun } from '../../helpers/proc-trees.js';

// `status` of one run (--run), of a run whose lost process left its engine holding GPU memory
// (nvidia-smi is asked, and only then: it costs ~100 ms), and the document's fields when a record
// lacks its supervisor or a process is alive but not ready yet.


const home = tempHomes('dd-status-gpu-');
afterEach(() => killStarted());

/** A fake nvidia-smi on PATH that notes each call, then answers as the test fixture does. */
function countingSmi(dir: string, apps: string): { env: NodeJS.ProcessEnv; calls: () => number } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const log = join(dir, 'smi-calls');
  writeFileSync(join(bin, 'nvidia-smi'), `#!/bin/sh\necho x >> '${log}'\nexec '${join(FIXTURES, 'bin', 'gpu', 'nvidia-smi')}' "$@"\n`);
  chmodSync(join(bin, 'nvidia-smi'), 0o755);
  return {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_NVIDIA_SMI_APPS: apps },
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0),
  };
}

describe('status --run', () => {
  it('one run\'s document, with the processes only its marker finds listed as unrecorded', async () => {
    const { stateDir } = home();
    const id = '20261201-100000-000-agg';
    const tree = await spawnTree('honour', { [RUN_MARKER]: markerFor(stateDir, id) });
    await writeFakeRun(stateDir, { id, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [] });
    const docs = await collectStatus(stateDir, { runId: id });
    expect(docs.map((d) => [d.id, d.live])).toEqual([[id, true]]);
    expect(docs[0].unrecorded.map((u) => u.pid)).toEqual(expect.arrayContaining([tree.pid, tree.engine.pid]));
    expect(docs[0].unrecorded.find((u) => u.pid === tree.engine.pid)?.cmd).toMatch(/^VLLM::EngineCore/);
  });
});

describe('the GPU memory a lost process left', () => {
  it('an engine left behind by a lost worker: nvidia-smi is asked and its memory shown; lost processes that left nothing show none', async () => {
    const h = home();
    const withEngine = '20261201-100000-000-agg';
    const other = '20261201-090000-000-agg';
    const tree = await spawnTree('honour');
    const frontends = [await spawnLone('python3'), await spawnLone('python3')];
    await writeFakeRun(h.stateDir, {
      id: other, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [
        { name: 'frontend', pid: frontends[1].pid, startTicks: frontends[1].startTicks },
        { name: 'agg-0', pid: deadPid(), startTicks: 1 },
      ],
    });
    await writeFakeRun(h.stateDir, {
      id: withEngine, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [
        { name: 'frontend', pid: frontends[0].pid, startTicks: frontends[0].startTicks },
        // agg-0's leader is gone; its engine (recorded as its descendant) still lives and holds memory.
        { name: 'agg-0', pid: deadPid(), startTicks: 1, descendants: [tree.engine] },
        { name: 'agg-1', pid: deadPid(), startTicks: 1 },
      ],
    });
    const apps = join(h.dir, 'apps.csv');
    writeFileSync(apps, `${tree.engine.pid}, VLLM::EngineCore, 3010\n`);
    const smi = countingSmi(h.dir, apps);
    const docs = await collectStatus(h.stateDir, { env: smi.env });
    expect(smi.calls()).toBe(1);
    expect(docs.map((d) => [d.id, d.live, d.gpuChecked])).toEqual([[withEngine, true, true], [other, true, false]]);
    expect(docs[0].lost.map((x) => [x.name, x.gpuMiB])).toEqual([['agg-0', 3010], ['agg-1', null]]);
    expect(docs[1].lost.map((x) => [x.name, x.leftPids, x.gpuMiB])).toEqual([['agg-0', [], null]]);
  });

  it('lost processes that left nothing: nvidia-smi is not asked', async () => {
    const h = home();
    const id = '20261201-100000-000-agg';
    const frontend = await spawnLone('python3');
    await writeFakeRun(h.stateDir, {
      id, supervisor: { pid: deadPid(), startTicks: 1 }, processes: [
        { name: 'frontend', pid: frontend.pid, startTicks: frontend.startTicks },
        { name: 'agg-0', pid: deadPid(), startTicks: 1 },
      ],
    });
    const smi = countingSmi(h.dir, 'none');
    const [doc] = await collectStatus(h.stateDir, { env: smi.env });
    expect(doc).toMatchObject({ id, live: true, gpuChecked: false });
    expect(doc.lost.map((x) => [x.name, x.leftPids, x.gpuMiB])).toEqual([['agg-0', [], null]]);
    expect(smi.calls()).toBe(0);
  });

  it('leftovers nvidia-smi does not list: no memory is claimed for them (null, not 0)', () => {
    const d = { id: 'r', lost: [{ name: 'agg-0', leftPids: [30, 31], gpuMiB: null }], gpuChecked: false } as unknown as RunStatusDoc;
    const [out] = withLeftoverMemory([d], new Map([[10, 3000]]));
    expect(out).toMatchObject({ gpuChecked: true, lost: [{ name: 'agg-0', gpuMiB: null }] });
  });
});

describe('the status document of odd records', () => {
  const proc = (o: Partial<ProcessRecord>): ProcessRecord => ({
    name: 'agg-0', role: 'agg', pid: 100, pgid: 100, startTicks: 500, startedAt: '2026-11-30T10:00:00.000Z', argv: [], env: {}, ports: {},
    gpuMemoryUtilization: 0.38, state: 'starting', kvTokens: null, exitCode: null, signal: null, log: '/x.log', descendants: [], ...o,
  });
  const rec = (o: Partial<RunRecord>): RunRecord => ({
    id: 'r', recipe: 'agg', model: 'm', createdAt: '2026-11-30T10:00:00.000Z', updatedAt: '2026-11-30T10:00:01.000Z',
    state: 'starting', frontendUrl: 'http://f', plan: {} as RunRecord['plan'], processes: [proc({})], ...o,
  }) as RunRecord;
  const l = (o: Partial<RunLiveness> = {}): RunLiveness => ({
    supervisor: false, processes: true, perProcess: [{ name: 'agg-0', alive: true, recycled: false, pids: [100] }], marked: [], pids: [100], ownedPids: [100], ...o,
  });

  it('a live process still starting is alive but not ready', () => {
    const doc = buildRunStatus(rec({ supervisor: { pid: 50, startTicks: 40, detached: false } }), l(), '/s', Date.parse('2026-11-30T10:01:00Z'));
    expect(doc.processes[0]).toMatchObject({ alive: true, ready: false, state: 'starting', uptimeMs: 60000 });
  });

  it('a record without its supervisor: not detached, supervisor pid 0, not alive', () => {
    const doc = buildRunStatus(rec({}), l(), '/s', 0);
    expect(doc).toMatchObject({ detached: false, supervisor: { pid: 0, alive: false }, live: true });
  });

  it('unrecorded processes without a way to read their command line, or a liveness without a marker list', () => {
    const sup = { supervisor: { pid: 50, startTicks: 40, detached: false } };
    expect(buildRunStatus(rec(sup), l({ marked: [700] }), '/s', 0).unrecorded).toEqual([{ pid: 700, cmd: '' }]);
    expect(buildRunStatus(rec(sup), l({ marked: undefined as unknown as number[] }), '/s', 0).unrecorded).toEqual([]);
  });
});
