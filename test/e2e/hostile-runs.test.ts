import { afterEach, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fakeEnv, FIXTURES, ROOT, runCli, tempHome } from '../helpers/cli.js';
import { deadPid, isAlive, killStarted, spawnLone, runEnv, spawnTree, track, waitUntil, writeFakeRun } from '../helpers/proc-trees.js';
import { freeBlock } from '../helpers/ports.js';
import { markedPids } from '../helpers/runs.js';
import { killChildren } from '../helpers/children.js';
import { startUp, type Ev } from '../helpers/up-run.js';
import { assertRoot, asOther, otherHome, OTHER_UID, runCliAs } from '../helpers/second-user.js';
import { RUN_MARKER } from '../../src/run/run-scan.js';

// Issue 12, causes 2 to 7, against real processes through the built binary: every process of a
// run stays findable (the run marker), no record or stranger can turn teardown against us, and
// teardown never says "nothing remains" while something of the run lives. Cross-user cases run as
// root with a second uid, as CI does.

const homes: { cleanup: () => void }[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  killStarted();
  await killChildren(children);
  // Each home's cleanup SIGKILLs what its runs left (a test that timed out mid-`up`: the run's
  // fakes, escapees, a supervisor; found by run marker and state dir) before removing it, so
  // nothing of this test runs on into the next one or outlives the file.
  for (const h of homes.splice(0)) h.cleanup();
});

function home(vars: Record<string, string> = {}) {
  const h = tempHome('dd-runs-');
  homes.push(h);
  return { ...h, env: fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120', ...vars } }) };
}

/** The marker value the supervisor gives a run's children: its directory under the real state dir path. */
function markerOf(stateDir: string, id: string): string {
  mkdirSync(stateDir, { recursive: true });
  return join(realpathSync(stateDir), 'runs', id);
}

const cmdOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');

interface StatusDoc { runs: { id: string; state: string; live: boolean; processes: { name: string; pid: number | null; alive: boolean }[]; unrecorded: { pid: number; cmd: string }[] }[] }
interface TeardownDoc { stopped: { name: string; pid: number; signal: string | null; note?: string }[]; remaining: { name: string; pid: number; cmd: string }[]; runs: string[]; warnings?: string[] }

async function statusDoc(env: Record<string, string | undefined>): Promise<StatusDoc> {
  const r = await runCli(['status', '--json', '--all'], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as StatusDoc;
}

describe('cause 3: up SIGKILLed just after a spawn', () => {
  it('the spawned processes are recorded before `starting` is printed: status says orphaned, teardown stops everything', async () => {
    const h = home();
    const base = await freeBlock(5_000, 300, 20, [0, 1, 10]);
    const child = spawn(process.execPath, [BIN, 'up', 'agg', '--json', '--no-preflight', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`], {
      env: h.env as NodeJS.ProcessEnv, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let runId = '';
    await new Promise<void>((resolve, reject) => {
      let buf = '';
      child.stdout!.on('data', (d) => {
        buf += d;
        for (const line of buf.split('\n').slice(0, -1)) {
          const e = JSON.parse(line) as { event: string; process?: string; runId?: string };
          if (e.event === 'plan') runId = e.runId!;
          if (e.event === 'starting' && e.process === 'agg-0') {
            child.kill('SIGKILL'); // the moment the old asynchronous write lost
            resolve();
          }
        }
        buf = buf.slice(buf.lastIndexOf('\n') + 1);
      });
      child.on('exit', () => reject(new Error('up ended before starting agg-0')));
    });
    const marker = markerOf(h.stateDir, runId);
    const run = (await statusDoc(h.env)).runs.find((r) => r.id === runId)!;
    expect(run.state).toBe('orphaned');
    expect(run.processes.map((p) => [p.name, p.pid !== null])).toEqual([['frontend', true], ['agg-0', true]]);
    expect(markedPids(marker).length).toBeGreaterThanOrEqual(2);

    const t = await runCli(['teardown', '--json', '--grace', '5'], h.env);
    expect(t.code, t.stderr).toBe(0);
    const doc = JSON.parse(t.stdout) as TeardownDoc;
    expect(doc.runs).toEqual([runId]);
    expect(doc.remaining).toEqual([]);
    expect(doc.stopped.map((s) => s.name)).toEqual(expect.arrayContaining(['frontend', 'agg-0']));
    expect(markedPids(marker)).toEqual([]); // the frontend, the worker and its engine: all gone
  });

  it('processes no record names (up killed between spawn and write) are found by the run marker and stopped', async () => {
    const h = home();
    const id = '20261130-101500-000-agg';
    const marker = markerOf(h.stateDir, id);
    const tree = await spawnTree('honour', { [RUN_MARKER]: marker });
    await writeFakeRun(h.stateDir, {
      id, state: 'starting', supervisor: { pid: deadPid(), startTicks: 1 },
      processes: [{ name: 'frontend', pid: null, startTicks: null, state: 'waiting' }, { name: 'agg-0', pid: null, startTicks: null, state: 'waiting' }],
    });
    const run = (await statusDoc(h.env)).runs[0];
    expect(run).toMatchObject({ id, state: 'orphaned', live: true });
    expect(run.unrecorded.map((u) => u.pid)).toEqual([tree.pid, tree.engine.pid].sort((a, b) => a - b));
    const t = await runCli(['teardown', '--json'], h.env);
    expect(t.code, t.stderr).toBe(0);
    const doc = JSON.parse(t.stdout) as TeardownDoc;
    expect(doc.remaining).toEqual([]);
    expect(doc.stopped.filter((s) => s.note === 'found by its run marker').map((s) => s.pid).sort((a, b) => a - b))
      .toEqual([tree.pid, tree.engine.pid].sort((a, b) => a - b));
    expect(isAlive(tree.pid) || isAlive(tree.engine.pid)).toBe(false);
  });
});

describe('cause 4: a child that double-forked out of its group', () => {
  it('status lists it, doctor counts it as the run\'s, teardown stops it; "nothing remains" only when nothing does', async () => {
    const h = home();
    const id = '20261130-101500-000-agg';
    const marker = markerOf(h.stateDir, id);
    const tree = await spawnTree('double-fork', { [RUN_MARKER]: marker });
    const escaped = await waitUntil(() => {
      const known = new Set([tree.pid, tree.engine.pid]);
      const e = markedPids(marker).filter((p) => !known.has(p) && /^(helper-daemon|VLLM::Worker) /.test(cmdOf(p)));
      return e.length === 2 ? e : null;
    }, 'the two escapees');
    escaped.forEach(track);
    for (const pid of escaped) expect(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]).not.toBe(String(tree.pid)); // own group
    await writeFakeRun(h.stateDir, {
      id, supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'frontend', pid: null, startTicks: null, state: 'stopped' }, { name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: [tree.engine] }],
    });

    const run = (await statusDoc(h.env)).runs[0];
    expect(run.live).toBe(true);
    expect(run.unrecorded.map((u) => u.pid)).toEqual(escaped);
    expect(run.unrecorded.map((u) => u.cmd).sort()).toEqual(['VLLM::Worker 3000', 'helper-daemon 3000']);
    const human = await runCli(['status'], h.env);
    expect(human.stdout).toMatch(/! pid \d+ helper-daemon 3000: the run's \(its marker\), in no record/);

    const d = await runCli(['doctor', '--only', 'procs.leftover', '--json'], h.env);
    const check = (JSON.parse(d.stdout) as { checks: { evidence: { ourPids: number[]; processes: { pid: number }[] } }[] }).checks[0];
    expect(check.evidence.ourPids).toEqual(expect.arrayContaining(escaped));
    // The escaped engine is the run's, not a leftover (other leftovers on this machine may exist).
    expect(check.evidence.processes.map((p) => p.pid)).not.toContain(escaped.find((p) => cmdOf(p).startsWith('VLLM::Worker')));

    const t = await runCli(['teardown', '--json'], h.env);
    expect(t.code, t.stderr).toBe(0);
    const doc = JSON.parse(t.stdout) as TeardownDoc;
    expect(doc.remaining).toEqual([]);
    expect(doc.stopped.filter((s) => escaped.includes(s.pid)).map((s) => [s.name, s.signal])).toEqual(
      expect.arrayContaining([['helper-daemon', 'SIGTERM'], ['VLLM::Worker', 'SIGTERM']]),
    );
    for (const pid of [tree.pid, tree.engine.pid, ...escaped]) expect(isAlive(pid), String(pid)).toBe(false);
  });

  it('a foreground up stopped with SIGTERM stops the helpers its processes double-forked too; none left, none unreported', async () => {
    const h = home();
    const base = await freeBlock(5_000, 300, 20, [0, 1, 10]);
    const up = startUp(['up', 'agg', '--json', '--no-preflight', '--python', join(FIXTURES, 'hostile', 'python-double-forks'),
      '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`], h.env, children);
    const { child, events } = up;
    const exited = up.exit.then((e) => e.code);
    // Ready when `up` says so, bounded by the test's own timeout (not a window of its own: with two
    // suites at once the fakes took longer than 20 s once).
    await up.waitEvent((e) => e.event === 'ready', null);
    const runId = events.find((e) => e.event === 'plan')!.runId!;
    const marker = markerOf(h.stateDir, runId);
    const helpers = markedPids(marker).filter((p) => cmdOf(p).startsWith('helper-daemon'));
    // One per process (the frontend's and the worker's) and one of up's probe of the Dynamo version,
    // which runs with the run's marker too (hostile-probe-leftovers.test.ts).
    expect(helpers).toHaveLength(3);
    helpers.forEach(track);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const stopped = events.find((e) => e.event === 'stopped')! as Ev & { stopped: { name: string; pid: number }[] };
    expect(stopped.remaining).toEqual([]);
    // Each helper is reported: by its own name when the marker found it after it escaped, or with the
    // process it was forked by when the supervisor's look caught it still that process's descendant
    // (a loaded machine slows the double fork; descendants are stopped and reported with their process).
    const byName = stopped.stopped.filter((s) => s.name === 'helper-daemon').map((s) => s.pid);
    const rec = JSON.parse(readFileSync(join(h.stateDir, 'runs', runId, 'run.json'), 'utf8')) as { processes: { name: string; descendants?: { pid: number }[] }[] };
    const asDescendant = rec.processes.filter((p) => stopped.stopped.some((s) => s.name === p.name)).flatMap((p) => (p.descendants ?? []).map((d) => d.pid));
    for (const pid of helpers) expect(byName.includes(pid) || asDescendant.includes(pid), `helper ${pid}: ${JSON.stringify(stopped.stopped)}`).toBe(true);
    expect(markedPids(marker)).toEqual([]);
  });

  it('a marked process teardown may not signal (the shell it runs in) is listed as remaining, exit 1: never "nothing remains"', async () => {
    const h = home();
    const id = '20261130-101500-000-agg';
    const marker = markerOf(h.stateDir, id);
    // A run recorded live (a detached up), its worker gone; the shell carries the run's marker.
    await writeFakeRun(h.stateDir, { id, state: 'ready', supervisor: { pid: deadPid(), startTicks: 1, detached: true }, processes: [{ name: 'agg-0', pid: null, startTicks: null }] });
    for (const json of [true, false]) {
      const r = await execa('bash', ['-c', `"${process.execPath}" "${BIN}" teardown ${json ? '--json' : ''}; echo "shell $$"`], {
        env: { ...h.env, [RUN_MARKER]: marker }, extendEnv: false, reject: false, cwd: ROOT,
      });
      const shell = Number(/shell (\d+)/.exec(r.stdout)![1]);
      expect(r.exitCode).toBe(0); // the echo's; the teardown's code is checked below through its output
      if (json) {
        const doc = JSON.parse(r.stdout.slice(0, r.stdout.lastIndexOf('shell'))) as TeardownDoc;
        expect(doc.remaining).toEqual([expect.objectContaining({ pid: shell, name: 'bash' })]);
      } else {
        expect(r.stdout).toMatch(new RegExp(`1 process\\(es\\) remain:\\n  ✗ pid ${shell} \\(bash\\)`));
        expect(r.stdout).not.toContain('nothing remains');
      }
    }
    const code = await execa('bash', ['-c', `"${process.execPath}" "${BIN}" teardown >/dev/null; echo $?`], { env: { ...h.env, [RUN_MARKER]: marker }, extendEnv: false, reject: false, cwd: ROOT });
    expect(code.stdout.trim()).toBe('1');
  });
});

describe('cause 5: malformed run records', () => {
  it('each bad record is skipped with one warning naming its file; status, doctor, up and teardown work on the good one', async () => {
    const h = home();
    const tree = await spawnTree('honour', runEnv(h.stateDir, 'good'));
    await writeFakeRun(h.stateDir, {
      id: 'good', supervisor: { pid: deadPid(), startTicks: 1, detached: true },
      processes: [{ name: 'agg-0', pid: tree.pid, startTicks: tree.startTicks, descendants: [tree.engine] }],
    });
    const good = JSON.parse(readFileSync(join(h.stateDir, 'runs', 'good', 'run.json'), 'utf8')) as Record<string, unknown> & { processes: Record<string, unknown>[] };
    const bad: Record<string, string> = {
      'null-process': JSON.stringify({ ...good, id: 'null-process', processes: [null] }), // was: Cannot read properties of null (reading 'pid')
      'pid-zero': JSON.stringify({ ...good, id: 'pid-zero', processes: [{ ...good.processes[0], pid: 0, pgid: 0 }] }),
      'not-json': '{"id": "not-json", "proc',
      'wrong-id': JSON.stringify({ ...good, id: 'good' }),
    };
    for (const [dir, text] of Object.entries(bad)) {
      mkdirSync(join(h.stateDir, 'runs', dir), { recursive: true });
      writeFileSync(join(h.stateDir, 'runs', dir, 'run.json'), text);
    }
    const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('dynamo-dev: warning: ')).sort();
    const expected = [
      expect.stringMatching(/not-json\/run\.json: skipped, not a valid run record: not JSON/),
      expect.stringMatching(/null-process\/run\.json: skipped, not a valid run record: processes\.0: /),
      expect.stringMatching(/pid-zero\/run\.json: skipped, not a valid run record: processes\.0\.pid: /),
      expect.stringMatching(/wrong-id\/run\.json: skipped, not a valid run record: its id "good" is not its folder's/),
    ];

    const s = await runCli(['status', '--json', '--all'], h.env);
    expect(s.code).toBe(0);
    expect((JSON.parse(s.stdout) as StatusDoc).runs.map((r) => [r.id, r.live])).toEqual([['good', true]]);
    expect(warnings(s.stderr)).toEqual(expected);

    // (Its verdict depends on what else runs on this machine; here it only has to work.)
    const d = await runCli(['doctor', '--only', 'procs.leftover', '--json'], h.env);
    expect([0, 1]).toContain(d.code);
    expect((JSON.parse(d.stdout) as { checks: { evidence: { ourPids: number[] } }[] }).checks[0].evidence.ourPids).toEqual(expect.arrayContaining([tree.pid, tree.engine.pid]));
    expect(warnings(d.stderr)).toEqual(expected);

    const u = await runCli(['up', 'mocker', '--no-preflight'], h.env);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('another run is live: run good (ready)');

    const t = await runCli(['teardown', '--json'], h.env);
    expect(t.code).toBe(0);
    expect((JSON.parse(t.stdout) as TeardownDoc).stopped.map((x) => x.name)).toEqual(['agg-0']);
    expect(isAlive(tree.pid)).toBe(false);
    expect(warnings(t.stderr)).toEqual(expected);

    const explicit = await runCli(['status', '--run', 'null-process'], h.env);
    expect(explicit.code).toBe(2);
    expect(explicit.stderr).toMatch(/^dynamo-dev: --run null-process: .*null-process\/run\.json is not a valid run record: processes\.0: /);
    // Its way out: plain teardown (it found this run's processes by their marker above); the logs stay.
    expect(explicit.stderr.split('\n')[1]).toMatch(/^fix: dynamo-dev teardown   \(without --run: stops whatever of it still runs, found by its run marker\); its logs stay in .*null-process\/logs$/);
  });
});

describe('cause 6: the process-group guard', () => {
  it('a stale record whose leader is gone never reaches a later group that took its pgid', async () => {
    const h = home();
    const daemon = await spawnLone('some-daemon'); // leads its own group, started after the record's leader
    await writeFakeRun(h.stateDir, { id: 'stale', supervisor: { pid: deadPid(), startTicks: 1, detached: true }, processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 1 }] });
    const rec = JSON.parse(readFileSync(join(h.stateDir, 'runs', 'stale', 'run.json'), 'utf8'));
    rec.processes[0].pgid = daemon.pid; // the old group id, now the daemon's
    writeFileSync(join(h.stateDir, 'runs', 'stale', 'run.json'), JSON.stringify(rec));
    expect((await statusDoc(h.env)).runs[0]).toMatchObject({ live: false });
    const t = await runCli(['teardown', '--run', 'stale'], h.env);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('run stale is not running');
    expect(isAlive(daemon.pid)).toBe(true);
  });

  it('the recorded pgid is compared with the live leader\'s: a leader now in another group is stopped alone', async () => {
    const h = home();
    const leader = await spawnLone('python3 -m dynamo.vllm', ['3000'], { env: runEnv(h.stateDir, 'moved') });
    const stranger = await spawnLone('unrelated-job');
    await writeFakeRun(h.stateDir, { id: 'moved', supervisor: { pid: deadPid(), startTicks: 1, detached: true }, processes: [{ name: 'agg-0', pid: leader.pid, startTicks: leader.startTicks }] });
    const rec = JSON.parse(readFileSync(join(h.stateDir, 'runs', 'moved', 'run.json'), 'utf8'));
    rec.processes[0].pgid = stranger.pid;
    writeFileSync(join(h.stateDir, 'runs', 'moved', 'run.json'), JSON.stringify(rec));
    const t = await runCli(['teardown', '--json'], h.env);
    expect(t.code, t.stderr).toBe(0);
    expect(isAlive(leader.pid)).toBe(false);
    expect(isAlive(stranger.pid)).toBe(true);
  });

  it('pid or pgid 0 never counts kernel threads as a run: such a record is refused', async () => {
    const h = home();
    await writeFakeRun(h.stateDir, { id: 'zero', supervisor: { pid: deadPid(), startTicks: 1, detached: true }, processes: [{ name: 'agg-0', pid: deadPid(), startTicks: 1 }] });
    const path = join(h.stateDir, 'runs', 'zero', 'run.json');
    const rec = JSON.parse(readFileSync(path, 'utf8'));
    rec.processes[0].pgid = 0;
    writeFileSync(path, JSON.stringify(rec));
    const r = await runCli(['status', '--json'], h.env);
    expect(JSON.parse(r.stdout)).toEqual({ runs: [] });
    expect(r.stderr).toMatch(/zero\/run\.json: skipped, not a valid run record: processes\.0\.pgid: /);
  });

  it('a record from another boot names nothing alive, even a live process with the same pid and start ticks', async () => {
    const h = home();
    const p = await spawnLone('python3 -m dynamo.frontend');
    await writeFakeRun(h.stateDir, { id: 'old-boot', supervisor: { pid: deadPid(), startTicks: 1, detached: true }, processes: [{ name: 'frontend', pid: p.pid, startTicks: p.startTicks }] });
    const path = join(h.stateDir, 'runs', 'old-boot', 'run.json');
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), bootId: '00000000-0000-0000-0000-000000000000' }));
    expect((await statusDoc(h.env)).runs[0]).toMatchObject({ id: 'old-boot', live: false, state: 'failed' });
    const t = await runCli(['teardown'], h.env);
    expect(t.stdout).toContain('no live runs');
    expect(isAlive(p.pid)).toBe(true);
    // Written by this boot, the same record is live.
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() }));
    expect((await statusDoc(h.env)).runs[0]).toMatchObject({ live: true });
  });
});

describe('cause 7: one up per state directory, one directory per run', () => {
  it('up.lock holds across pid namespaces: a containerised up sharing the state dir keeps it from the host', async () => {
    assertRoot(); // unshare needs CAP_SYS_ADMIN
    const h = home();
    const base = await freeBlock(5_000, 300, 20, [0, 1, 2]);
    const sets = ['--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`];
    const inner = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', process.execPath, BIN, 'up', 'mocker', '--no-preflight', '--json', ...sets], {
      env: h.env as NodeJS.ProcessEnv, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(inner);
    let out = '';
    await new Promise<void>((resolve, reject) => {
      inner.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('"event":"starting"')) resolve();
      });
      inner.on('exit', (code) => reject(new Error(`namespaced up exited ${code}: ${out}`)));
    });
    const lockOwner = JSON.parse(readFileSync(join(h.stateDir, 'up.lock'), 'utf8')) as { pid: number; runId: string };
    expect(lockOwner.pid).toBeLessThan(10); // its pid in its own namespace: meaningless here
    const r = await runCli(['up', 'mocker', '--no-preflight', ...sets], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`dynamo-dev: another up is running: run ${lockOwner.runId} (pid ${lockOwner.pid}); one up per state directory unless each run has a name\nfix: dynamo-dev teardown --run ${lockOwner.runId}   (or up --name NAME for a second run beside it)`);
    // unshare does not pass signals on: stop the namespaced up itself (its init; it handles SIGTERM).
    const upPid = Number(readFileSync(`/proc/${inner.pid}/task/${inner.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    const exited = new Promise((res) => inner.once('exit', res));
    process.kill(upPid, 'SIGTERM');
    await exited;
  });

  it('two ups in the same second get their own run ids, folders, records and logs', async () => {
    const h = home();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await runCli(['up', 'agg', '--no-preflight', '--python', '/nonexistent/python', '--json'], h.env);
      expect(r.code).toBe(1); // the interpreter cannot start: the run fails at once
      ids.push((JSON.parse(r.stdout.split('\n')[0]) as { runId: string }).runId);
    }
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) {
      expect(id).toMatch(/^\d{8}-\d{6}-\d{3}-agg(-\d+)?$/);
      expect(JSON.parse(readFileSync(join(h.stateDir, 'runs', id, 'run.json'), 'utf8')).id).toBe(id);
      expect(readFileSync(join(h.stateDir, 'runs', id, 'logs', 'frontend.log'), 'utf8').match(/cannot start/g)).toHaveLength(1);
    }
  });
});

describe('cause 2: a state directory others can write is not trusted', () => {
  it('another user plants a run.json in a shared (777) state dir naming root\'s process: root\'s commands refuse (exit 2), nothing is signalled', async () => {
    assertRoot();
    const h = home();
    const victim = await spawnLone('important-root-job');
    mkdirSync(h.stateDir);
    chmodSync(h.stateDir, 0o777); // a shared /tmp-style dir
    chmodSync(h.dir, 0o755);
    // The other user plants runs/<id>/run.json naming the victim (pid and start ticks are public in /proc).
    const rec = {
      id: 'planted', recipe: 'agg', model: 'm', createdAt: new Date().toISOString(), updatedAt: new Date().toISOString(),
      supervisor: { pid: deadPid(), startTicks: 1, detached: true }, state: 'ready', frontendUrl: 'http://127.0.0.1:8000', plan: {},
      processes: [{ name: 'agg-0', role: 'agg', pid: victim.pid, pgid: victim.pid, startTicks: victim.startTicks, startedAt: null, argv: [], env: {}, ports: {},
        gpuMemoryUtilization: null, state: 'ready', kvTokens: null, exitCode: null, signal: null, log: '', descendants: [] }],
    };
    const plant = `const fs=require('fs');fs.mkdirSync(process.argv[1]+'/runs/planted',{recursive:true});fs.writeFileSync(process.argv[1]+'/runs/planted/run.json',process.argv[2])`;
    execFileSync(asOther()[0], [...asOther().slice(1), process.execPath, '-e', plant, h.stateDir, JSON.stringify(rec)]);
    for (const args of [['teardown'], ['status'], ['doctor', '--only', 'procs.leftover'], ['up', 'mocker', '--no-preflight']]) {
      const r = await runCli(args, h.env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.split('\n')[0], args.join(' ')).toBe(`dynamo-dev: ${h.stateDir}: the state directory is writable by everyone (mode 0777); anyone who can write it could make teardown signal their choice of process`);
    }
    expect(isAlive(victim.pid)).toBe(true);
  });

  it('a state dir (or runs/) owned by another user is refused; so is one writable by its group', async () => {
    assertRoot();
    const o = otherHome();
    homes.push(o);
    chmodSync(o.dir, 0o755);
    execFileSync(asOther()[0], [...asOther().slice(1), 'mkdir', '-m', '700', o.stateDir]);
    const env = fakeEnv({ stateDir: o.stateDir, hfCache: join(o.dir, 'hf') });
    const r = await runCli(['teardown'], env);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(`dynamo-dev: ${o.stateDir}: the state directory belongs to uid ${OTHER_UID}, not to you (uid 0); its records could name any process, so it is not used`);
    // The owner itself may use it; a runs/ its group may write is refused to it too.
    const own = await runCliAs(OTHER_UID, ['status'], { PATH: process.env.PATH, HOME: o.dir, DYNAMO_DEV_HOME: o.stateDir });
    expect(own.code, own.stderr).toBe(0);
    execFileSync(asOther()[0], [...asOther().slice(1), 'mkdir', '-m', '770', join(o.stateDir, 'runs')]);
    chmodSync(join(o.stateDir, 'runs'), 0o770);
    const grp = await runCliAs(OTHER_UID, ['status'], { PATH: process.env.PATH, HOME: o.dir, DYNAMO_DEV_HOME: o.stateDir });
    expect(grp.code).toBe(2);
    expect(grp.stderr).toContain(`${o.stateDir}/runs: the runs folder is writable by its group (mode 0770)`);
  });

  it('a record in our own state dir naming another user\'s process: never signalled, never counted as the run\'s', async () => {
    assertRoot();
    const h = home();
    const theirs = await spawnLone('python3 -m dynamo.vllm', ['3000'], { uid: OTHER_UID });
    await writeFakeRun(h.stateDir, { id: 'r', supervisor: { pid: deadPid(), startTicks: 1, detached: true }, processes: [{ name: 'agg-0', pid: theirs.pid, startTicks: theirs.startTicks }] });
    expect((await statusDoc(h.env)).runs[0]).toMatchObject({ live: false });
    const t = await runCli(['teardown', '--run', 'r'], h.env);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('run r is not running');
    expect(isAlive(theirs.pid)).toBe(true);
    // `teardown --orphans` is not run here: run as root in the machine's pid namespace it stops every
    // engine-looking process of root that no run of this state dir owns, i.e. other test files'
    // fakes and real Dynamo processes. teardown.test.ts runs it in a private pid namespace, with a
    // process of another uid that must survive.
  });
});
