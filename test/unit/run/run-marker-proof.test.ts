import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environVerdict, holdsRunDir, leftAlone, notOursNote, openPathsOf, proves, provesRun, readEnviron } from '../../../src/run/run-marker-proof.js';
import { stopTargets, type StopTarget } from '../../../src/run/stop.js';
import { FakeMachine } from '../../helpers/fake-machine.js';

// Whether a recorded pid proves to be a run's (start time AND run marker): the verdict on an
// environment block as /proc/PID/environ gives it, the proof each kind of target needs, and the
// stop leaving a target alone that does not prove it.

const MARKER = '/home/u/.local/state/dynamo-dev/runs/20261207-140000-000-agg';
// A worker's environment as the supervisor starts it (NUL-separated, the marker last).
const marked = `PATH=/usr/bin:/bin\0HOME=/home/u\0CUDA_VISIBLE_DEVICES=0\0DYNAMO_DEV_RUN=${MARKER}\0`;
// What /proc/PID/environ of a vLLM EngineCore reads after setproctitle('VLLM::EngineCore')
// (setproctitle 1.3.8 zeroes the argv+environ area: 1,345 NULs here for a 1,345-byte environment).
const wiped = '\0'.repeat(1345);

describe('environVerdict', () => {
  it('marked only by this run\'s marker; another run\'s or none is unmarked; NULs (or a title) alone are wiped; unreadable is unmarked', () => {
    expect(environVerdict(marked, MARKER)).toBe('marked');
    expect(environVerdict(marked, `${MARKER}-2`)).toBe('unmarked');
    expect(environVerdict('PATH=/usr/bin\0HOME=/home/u\0', MARKER)).toBe('unmarked');
    expect(environVerdict(`DYNAMO_DEV_RUN=${MARKER}/x\0`, MARKER)).toBe('unmarked');
    expect(environVerdict(wiped, MARKER)).toBe('wiped');
    expect(environVerdict(`VLLM::EngineCore${'\0'.repeat(100)}`, MARKER)).toBe('wiped');
    expect(environVerdict('', MARKER)).toBe('wiped');
    expect(environVerdict(null, MARKER)).toBe('unmarked');
  });
});

describe('proves', () => {
  const none = () => [];
  it('a leader needs the marker; an engine the marker or a wiped environment; a supervisor the marker or its run directory open', () => {
    expect(proves('leader', 'marked', none, MARKER)).toBe(true);
    expect(proves('leader', 'wiped', none, MARKER)).toBe(false);
    expect(proves('leader', 'unmarked', () => [MARKER], MARKER)).toBe(false);
    expect(proves('engine', 'wiped', none, MARKER)).toBe(true);
    expect(proves('engine', 'unmarked', none, MARKER)).toBe(false);
    expect(proves('supervisor', 'unmarked', () => ['/dev/null', `${MARKER}/logs/agg-0.log`], MARKER)).toBe(true);
    expect(proves('supervisor', 'unmarked', () => [MARKER], MARKER)).toBe(true);
    expect(proves('supervisor', 'unmarked', () => [`${MARKER}-2`, `${MARKER}x/logs`], MARKER)).toBe(false);
    expect(proves('supervisor', 'wiped', none, MARKER)).toBe(false);
  });

  it('holdsRunDir: the directory itself or a path inside it, never a sibling sharing its prefix', () => {
    expect(holdsRunDir([MARKER], MARKER)).toBe(true);
    expect(holdsRunDir([`${MARKER}/run.json`], MARKER)).toBe(true);
    expect(holdsRunDir([`${MARKER}-agg`, 'socket:[7108327]'], MARKER)).toBe(false);
    expect(holdsRunDir([], MARKER)).toBe(false);
  });

  it('leftAlone reads back the pid of its own note only', () => {
    expect(leftAlone(notOursNote(4913))).toEqual([4913]);
    expect(leftAlone('pid 4913 now belongs to another process (start time differs): recycled, not signalled')).toEqual([]);
    expect(leftAlone(undefined)).toEqual([]);
  });
});

describe('on real processes', () => {
  it('a child started with the marker proves it; one without does not; a gone pid does not; this process proves a supervisor by the run directory it holds open', () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dd-proof-')));
    const run = join(dir, 'runs', 'r1');
    const withMarker = spawn('sleep', ['30'], { env: { ...process.env, DYNAMO_DEV_RUN: run }, stdio: 'ignore' });
    const without = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      expect(environVerdict(readEnviron(withMarker.pid!), run)).toBe('marked');
      expect(provesRun(withMarker.pid!, run, 'leader')).toBe(true);
      expect(provesRun(without.pid!, run, 'leader')).toBe(false);
      expect(provesRun(without.pid!, run, 'supervisor')).toBe(false);
      expect(readEnviron(2 ** 22 + 1)).toBeNull();
      expect(openPathsOf(2 ** 22 + 1)).toEqual([]);
      rmSync(dir, { recursive: true });
      mkdirSync(run, { recursive: true });
      expect(provesRun(process.pid, run, 'supervisor')).toBe(false);
      const fd = openSync(run, 'r');
      try {
        expect(provesRun(process.pid, run, 'supervisor')).toBe(true);
        expect(provesRun(process.pid, run, 'leader')).toBe(false);
      } finally {
        closeSync(fd);
      }
    } finally {
      withMarker.kill('SIGKILL');
      without.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a stop with proof', () => {
  const worker = { pid: 100, ppid: 11, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.vllm' };
  const engine = { pid: 101, ppid: 100, pgid: 100, startTicks: 510, cmd: 'VLLM::EngineCore' };
  const target: StopTarget = { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500, proof: { marker: MARKER, as: 'leader' }, descendants: [{ pid: 101, startTicks: 510, cmd: 'VLLM::EngineCore' }] };

  it('a leader that does not prove it: nothing of its group is signalled, the note says so; one that does: its group is, its engine never asked', async () => {
    for (const leaderOurs of [false, true]) {
      const m = new FakeMachine([{ ...worker, termExitMs: 0 }, { ...engine, termExitMs: 0 }]);
      const asked: [number, string][] = [];
      const r = await stopTargets([target], { graceMs: 300 }, {
        ...m.deps(),
        proves: (pid, marker, as) => {
          asked.push([pid, as]);
          return marker === MARKER && pid === 100 && leaderOurs;
        },
      });
      expect(asked).toEqual([[100, 'leader']]);
      if (leaderOurs) {
        expect(r.stopped[0]).toMatchObject({ signal: 'SIGTERM' });
        expect(m.signals[0]).toMatchObject({ pid: -100, sig: 'SIGTERM' });
      } else {
        expect(r.stopped[0]).toEqual({ name: 'agg-0', pid: 100, signal: null, ms: 0, note: 'pid 100 is no longer ours (no run marker): left alone' });
        expect(m.signals).toEqual([]);
      }
    }
  });

  it('the leader gone: the recorded engine proves itself as an engine, or nothing is signalled', async () => {
    for (const engineOurs of [false, true]) {
      const m = new FakeMachine([{ ...engine, ppid: 1, termExitMs: 0 }]);
      const r = await stopTargets([target], { graceMs: 300 }, { ...m.deps(), proves: (pid, _m, as) => pid === 101 && as === 'engine' && engineOurs });
      if (engineOurs) expect(r.stopped[0]).toMatchObject({ signal: 'SIGTERM', note: 'leader had already exited; its group had not' });
      else {
        expect(r.stopped[0]).toMatchObject({ signal: null, note: 'pid 101 is no longer ours (no run marker): left alone' });
        expect(m.signals).toEqual([]);
      }
    }
  });

  it('without a proof (the supervisor\'s own children) nothing is asked', async () => {
    const m = new FakeMachine([{ ...worker, termExitMs: 0 }]);
    const r = await stopTargets([{ name: 'agg-0', pid: 100, pgid: 100, startTicks: 500 }], { graceMs: 300 }, { ...m.deps(), proves: () => { throw new Error('asked'); } });
    expect(r.stopped[0]).toMatchObject({ signal: 'SIGTERM' });
  });
});
