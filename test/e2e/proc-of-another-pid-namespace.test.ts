import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { execa } from 'execa';
import { BIN, fakeEnv, runCli, tempHomes } from '../helpers/cli.js';
import { portBlock, records } from '../helpers/runs.js';
import { assertRoot } from '../helpers/second-user.js';
import { procIsOurs } from '../../src/run/proc.js';

// `unshare --pid --fork` without --mount-proc (or a shell nsenter'ed into a namespace's mounts but
// not its pids) leaves a /proc that names another namespace's pids. Every start-time check then
// passes on THAT namespace's process while kill() reaches OURS of the same number: a stranger.
// Found by hand (round 7): such a teardown printed "survived SIGKILL" for a run whose processes it
// never reached, after sending SIGKILL to whatever had those numbers in its own namespace. up and
// teardown refuse there (exit 1, one line), before anything is started or signalled; status, logs
// and doctor, which only read, warn that what they report of processes is that namespace's.

const home = tempHomes('dd-pidns-');
const MESSAGE = /^dynamo-dev: \/proc shows another pid namespace than this process's \(our pid is 1, \/proc\/self is \d+\): pids read there would be signalled in the wrong namespace, so nothing is started or signalled\. Run dynamo-dev where \/proc is this namespace's/;

const WARNING = /^dynamo-dev: warning: \/proc shows another pid namespace than this process's \(our pid is 1, \/proc\/self is \d+\): the processes reported here are that namespace's, not this one's\. Run dynamo-dev where \/proc is this namespace's/m;

/** The CLI as pid 1 of a new pid namespace that still sees the machine's /proc (as root, as CI runs). */
const unshared = (args: string[], env: Record<string, string | undefined>) =>
  execa('unshare', ['--pid', '--fork', '--kill-child=SIGKILL', process.execPath, BIN, ...args], { env, extendEnv: false, reject: false, timeout: 30_000 });

/** Alive and not a zombie (a stopped run's processes are reaped by whoever adopted them, a moment later). */
const alive = (pid: number) => {
  try {
    return !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

describe('/proc of another pid namespace', () => {
  it('procIsOurs: /proc/self must name our own pid; without /proc nothing can mismatch', () => {
    expect(procIsOurs('4242', 4242, true)).toBe(true);
    expect(procIsOurs('23577', 1, true)).toBe(false);
    expect(procIsOurs(null, 1, true)).toBe(false); // /proc/self does not resolve: another namespace's /proc
    expect(procIsOurs('42', 4242, true)).toBe(false);
    expect(procIsOurs(null, 1, false)).toBe(true); // no /proc at all
  });

  it('teardown there refuses and signals nothing: the live run is untouched; up there starts nothing; a matching /proc works', async () => {
    assertRoot();
    const h = home();
    const base = await portBlock(21_000, 500);
    const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120' } });
    const sets = ['--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`];
    const up = await runCli(['up', 'agg', '--detach', '--no-preflight', '--json', ...sets], env, { timeoutMs: 30_000 });
    expect(up.code, up.stderr).toBe(0);
    const rec = records(h.stateDir)[0];
    const pids = [...rec.processes.map((p) => p.pid!), rec.supervisor.pid];
    expect(pids.filter(alive)).toEqual(pids);

    const td = await unshared(['teardown', '--grace', '1'], env);
    expect(td.exitCode).toBe(1);
    expect(td.stdout).toBe('');
    expect(td.stderr.trim().split('\n')).toHaveLength(1);
    expect(td.stderr).toMatch(MESSAGE);
    expect(pids.filter(alive)).toEqual(pids);

    // status, logs and doctor only read: they run there, and say first that the processes they
    // report are that namespace's (status would show the live run as gone or its pids as strangers').
    for (const args of [['status'], ['logs', 'agg-0', '--lines', '1'], ['doctor', '--only', 'procs.leftover']]) {
      const r = await unshared(args, env);
      expect(r.stderr, args.join(' ')).toMatch(WARNING);
      expect(r.stderr.split('\n').filter((l) => /pid namespace/.test(l)), args.join(' ')).toHaveLength(1);
      expect(r.stdout.length, args.join(' ')).toBeGreaterThan(0);
    }
    expect((await runCli(['status'], env)).stderr).not.toMatch(/pid namespace/);

    const other = home();
    const up2 = await unshared(['up', 'agg', '--no-preflight', ...sets], fakeEnv(other, { gpu: 'laptop-570', python: true }));
    expect(up2.exitCode).toBe(1);
    expect(up2.stderr).toMatch(MESSAGE);
    expect(existsSync(other.stateDir)).toBe(false);

    // The same teardown where /proc is the namespace's own: it runs (and finds nothing of ours there).
    const ok = await execa('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', process.execPath, BIN, 'teardown', '--grace', '1'], { env, extendEnv: false, reject: false, timeout: 30_000 });
    expect(ok.stderr).not.toMatch(/pid namespace/);
    const okStatus = await execa('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', process.execPath, BIN, 'status'], { env, extendEnv: false, reject: false, timeout: 30_000 });
    // Its /proc is its own: no /proc warning; the run was supervised in the outer namespace, which is said (status-other-pid-namespace.test.ts).
    expect(okStatus.stderr).not.toMatch(/\/proc shows another pid namespace/);
    expect(okStatus.stderr).toMatch(/was supervised in another pid namespace/);
    expect(pids.filter(alive)).toEqual(pids);

    const real = await runCli(['teardown', '--grace', '2'], env, { timeoutMs: 30_000 });
    expect(real.code, real.stdout + real.stderr).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  });
});
