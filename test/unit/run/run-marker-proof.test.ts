import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environVerdict, holdsRunDir, leftAlone, notOursNote, notYetNote, openPathsOf, PROOF_LOOKS, proofOf, proves, provesRun, readEnviron } from '../../../src/run/run-marker-proof.js';
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
  it('marked only by this run\'s marker; another run\'s or none is unmarked; NULs (or a title) alone are wiped; nothing is empty; unreadable is unmarked', () => {
    expect(environVerdict(marked, MARKER)).toBe('marked');
    expect(environVerdict(marked, `${MARKER}-2`)).toBe('unmarked');
    expect(environVerdict('PATH=/usr/bin\0HOME=/home/u\0', MARKER)).toBe('unmarked');
    expect(environVerdict(`DYNAMO_DEV_RUN=${MARKER}/x\0`, MARKER)).toBe('unmarked');
    expect(environVerdict(wiped, MARKER)).toBe('wiped');
    expect(environVerdict(`VLLM::EngineCore${'\0'.repeat(100)}`, MARKER)).toBe('wiped');
    // Nothing at all (not even NULs): an exec in progress, or a process exiting.
    expect(environVerdict('', MARKER)).toBe('empty');
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
    expect(proves('engine', 'empty', none, MARKER)).toBe(true);
    expect(proves('leader', 'empty', none, MARKER)).toBe(false);
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

describe('proofOf: an environment caught mid-exec is looked at again', () => {
  /** Reads that answer these environments in turn (the last one from then on), counting the waits between. */
  const looks = (...reads: (string | null)[]) => {
    const l = { waits: 0, ended: false, read: () => (reads.length > 1 ? reads.shift()! : reads[0]), openPaths: () => [] as string[], sleep: () => void l.waits++, gone: () => l.ended, looks: 5 };
    return l;
  };

  it('empty, then a partial environment without the marker, then the whole one: proven, after two more looks', () => {
    const l = looks('', 'PATH=/usr/bin\0', marked);
    expect(proofOf(41, MARKER, 'leader', l)).toBe(true);
    expect(l.waits).toBe(2);
  });

  it('still empty at the last look: unsure (not a stranger), after the looks it is given', () => {
    const l = looks('');
    expect(proofOf(41, MARKER, 'leader', l)).toBe('unsure');
    expect(l.waits).toBe(5);
  });

  it('a stranger\'s environment stays without the marker (or wiped): no, after the same looks; so is one that stays unreadable while alive', () => {
    const stranger = looks('PATH=/usr/bin\0HOME=/home/v\0');
    expect(proofOf(41, MARKER, 'leader', stranger)).toBe(false);
    expect(stranger.waits).toBe(5);
    // The start of an environment (a read the exec cut short) can hold no '=' yet: a wiped one is looked at again too.
    const cut = looks('PA', marked);
    expect(proofOf(41, MARKER, 'leader', cut)).toBe(true);
    const wipedLeader = looks(wiped);
    expect(proofOf(41, MARKER, 'leader', wipedLeader)).toBe(false);
    expect(wipedLeader.waits).toBe(5);
    const unreadable = looks(null); // alive, and not ours to read (another user's)
    expect(proofOf(41, MARKER, 'leader', unreadable)).toBe(false);
    expect(unreadable.waits).toBe(5);
  });

  it('one that ended as we looked (empty, or unreadable as an exiting process is, then no entry; or a zombie): gone, not a stranger', () => {
    const exitingUnreadable = looks(null);
    exitingUnreadable.gone = () => exitingUnreadable.waits > 1;
    expect(proofOf(41, MARKER, 'leader', exitingUnreadable)).toBe('gone');
    const exiting = looks('', null);
    exiting.gone = () => exiting.waits > 0;
    expect(proofOf(41, MARKER, 'leader', exiting)).toBe('gone');
    const zombie = looks('');
    zombie.ended = true;
    expect(proofOf(41, MARKER, 'leader', zombie)).toBe('gone');
    expect(zombie.waits).toBe(0);
  });

  it('marked at the first look, or an engine with nothing to read: proven without waiting', () => {
    const l = looks(marked);
    expect(proofOf(41, MARKER, 'leader', l)).toBe(true);
    const engine = looks('');
    expect(proofOf(41, MARKER, 'engine', engine)).toBe(true);
    expect(l.waits + engine.waits).toBe(0);
  });

  it('the real looks: a few, milliseconds apart (an idle machine finishes an exec in well under one)', () => {
    expect(PROOF_LOOKS).toBeGreaterThanOrEqual(10);
    expect(PROOF_LOOKS * 2).toBeLessThanOrEqual(100);
  });

  it('a stop leaves an unsure leader unsignalled, saying so, and never calls it a stranger', async () => {
    const m = new FakeMachine([{ pid: 100, ppid: 1, pgid: 100, startTicks: 500, cmd: 'bash /root/.pyenv/shims/python3' }]);
    const deps = { ...m.deps(), proves: () => 'unsure' as const };
    const t: StopTarget = { name: 'frontend', pid: 100, pgid: 100, startTicks: 500, proof: { marker: MARKER, as: 'leader' } };
    const out = await stopTargets([t], { graceMs: 50 }, deps);
    expect(out.stopped[0]).toMatchObject({ name: 'frontend', signal: null, note: notYetNote(100) });
    expect(leftAlone(out.stopped[0].note)).toEqual([]);
    expect(m.signals).toEqual([]);
    expect(m.alive(100)).toBe(true);
  });

  it('a leader that ended as the stop looked (its supervisor stopping it too): already gone, not "no longer ours"', async () => {
    const m = new FakeMachine([{ pid: 100, ppid: 1, pgid: 100, startTicks: 500, cmd: 'python3 -m dynamo.mocker' }]);
    const t: StopTarget = { name: 'agg-0', pid: 100, pgid: 100, startTicks: 500, proof: { marker: MARKER, as: 'leader' } };
    const out = await stopTargets([t], { graceMs: 50 }, { ...m.deps(), proves: () => 'gone' as const });
    expect(out.stopped[0]).toMatchObject({ name: 'agg-0', signal: null, note: 'already gone' });
    expect(m.signals).toEqual([]);
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

describe('proofOf on real exec chains (a wrapper that execs its way to the program, as pyenv\'s shim does)', () => {
  it('a leader polled while it execs five times is never called a stranger: each look proves it, or is not sure yet', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dd-proof-exec-')));
    const run = join(dir, 'runs', 'r1');
    const chain = 'exec /usr/bin/env bash -c "exec /usr/bin/env bash -c \\"exec /usr/bin/env sleep 2\\""';
    const answers = new Map<string, number>();
    try {
      for (let i = 0; i < 10; i++) {
        const c = spawn('bash', ['-c', chain], { env: { ...process.env, DYNAMO_DEV_RUN: run }, stdio: 'ignore' });
        const t0 = Date.now();
        while (Date.now() - t0 < 60) {
          const a = String(proofOf(c.pid!, run, 'leader'));
          answers.set(a, (answers.get(a) ?? 0) + 1);
        }
        c.kill('SIGKILL');
        await new Promise((r) => c.once('exit', r));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(answers.get('false') ?? 0).toBe(0);
    expect(answers.get('true')).toBeGreaterThan(0);
  });
});
