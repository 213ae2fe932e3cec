import { userInfo } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { execa } from 'execa';
import { BIN, fakeEnv, tempHomes } from '../helpers/cli.js';
import { waitUntil } from '../helpers/proc-trees.js';
import { portBlock, records } from '../helpers/runs.js';
import type { RunRecord } from '../../src/run/types.js';

// A live `up --detach` in state dir A, and `doctor` / `teardown --orphans` in state dir B (a
// second terminal with another DYNAMO_DEV_HOME): B must not call A's processes leftovers, nor stop
// them, while A's run is live; once A's supervisor is gone what it left is B's leftover again.
// Everything runs in a private pid namespace: `teardown --orphans` as root in the machine's
// namespace would stop other test files' fakes. Killing the namespace's init ends whatever is left.

const home = tempHomes('dd-other-home-');
let ns: ChildProcess | null = null;
afterEach(() => {
  // SIGKILL of unshare (--kill-child) kills its child, the namespace's init, and with it every process inside.
  if (ns && ns.exitCode === null && ns.signalCode === null) ns.kill('SIGKILL');
  ns = null;
});

interface Check { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: any }

/** A private pid namespace whose init is `sleep`; returns its init's pid (as the host sees it). */
async function namespace(): Promise<number> {
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', 'sleep', '600'], { stdio: 'ignore' });
  ns = child;
  return waitUntil(() => {
    try {
      return Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]) || null;
    } catch {
      return null;
    }
  }, 'the namespace\'s init');
}

describe('a live run of another state dir is no leftover', () => {
  it('B\'s doctor warns naming A\'s run, B\'s teardown --orphans leaves it; once A\'s supervisor is killed, B reports and stops what it left', async () => {
    const init = await namespace();
    const inNs = (args: string[], env: Record<string, string | undefined>) =>
      execa('nsenter', ['-t', String(init), '-p', '-m', '--', ...args], { env, extendEnv: false, reject: false, timeout: 30_000 });
    const cli = (args: string[], env: Record<string, string | undefined>) => inNs([process.execPath, BIN, ...args], env);
    /** The pids of these (namespace) pids that are alive and not zombies. */
    const alive = async (pids: number[]) => {
      const r = await inNs(['sh', '-c', 'for p; do grep -Eqs "^State:[[:space:]]+[^ZX[:space:]]" /proc/$p/status && echo $p; done', 'sh', ...pids.map(String)], { PATH: process.env.PATH });
      return r.stdout.split('\n').filter(Boolean).map(Number);
    };

    const a = home();
    const b = home();
    const base = await portBlock(21_000, 500);
    const envA = fakeEnv(a, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120' } });
    const envB = fakeEnv(b, { gpu: 'laptop-570', python: true });
    const up = await cli(['up', 'agg', '--detach', '--no-preflight', '--json', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`], envA);
    expect(up.exitCode, up.stderr).toBe(0);
    const rec: RunRecord = records(a.stateDir)[0];
    const dirA = realpathSync(a.stateDir);
    const engine = rec.processes.find((p) => p.name === 'agg-0')!.descendants.find((d) => d.cmd.startsWith('VLLM::EngineCore'))!.pid;
    const pidsA = [...rec.processes.map((p) => p.pid!), engine]; // frontend, agg-0 and its engine core
    expect(await alive(pidsA)).toEqual(pidsA);

    // B's doctor: a warn (exit 0), naming A's processes, run, state dir and the command that stops it.
    const doc = await cli(['doctor', '--only', 'procs.leftover', '--json'], envB);
    expect(doc.exitCode, doc.stderr).toBe(0);
    const c = (JSON.parse(doc.stdout) as { checks: Check[] }).checks[0];
    expect(c.status).toBe('warn');
    expect(c.summary).toContain(`3 processes of another live run (run ${rec.id} of ${dirA})`);
    expect(c.fix).toBe(`if it must not run during your measurement: run ${rec.id} is ${userInfo().username}'s (state dir ${dirA}): ask its owner; \`dynamo-dev status --state-dir ${dirA}\` shows it`);
    expect(c.evidence.processes).toEqual([]);
    expect((c.evidence.otherRuns as { pid: number; run: string; stateDir: string }[]).map((p) => [p.pid, p.run, p.stateDir]).sort())
      .toEqual(pidsA.map((pid) => [pid, rec.id, dirA]).sort());
    expect(c.details.find((l) => l.startsWith(`pid ${engine} `))).toMatch(new RegExp(`  VLLM::EngineCore.*  \\(live run ${rec.id} of state dir ${dirA}: not a leftover\\)$`));

    // B's teardown --orphans: signals nothing, says what it left and why, once for the run, with
    // the command that stops that run on a line of its own.
    const human = await cli(['teardown', '--orphans', '--grace', '1'], envB);
    expect(human.exitCode, human.stderr).toBe(0);
    const lines = human.stdout.split('\n');
    const at = lines.indexOf(`  left alone: 3 processes of live run ${rec.id} (state dir ${dirA}), not leftovers:`);
    expect(at, human.stdout).toBeGreaterThan(-1);
    for (const pid of pidsA) expect(lines[at + 1]).toContain(`pid ${pid} `);
    expect(lines[at + 1]).toContain(`pid ${engine} VLLM::EngineCore`);
    expect(lines[at + 2]).toBe(`    not stopped from here; it shows with: dynamo-dev status --state-dir ${dirA}`);
    expect(human.stdout).toContain('no leftover engine processes');
    const json = await cli(['teardown', '--orphans', '--grace', '1', '--json'], envB);
    const td = JSON.parse(json.stdout) as { stopped: unknown[]; orphans: number; otherRuns: { pid: number; run: string; stateDir: string }[] };
    expect(td.stopped).toEqual([]);
    expect(td.orphans).toBe(0);
    expect(td.otherRuns.map((p) => p.pid).sort()).toEqual([...pidsA].sort());
    expect(await alive([...pidsA, rec.supervisor.pid])).toEqual([...pidsA, rec.supervisor.pid]);
    const status = JSON.parse((await cli(['status', '--json'], envA)).stdout) as { runs: { id: string; state: string; live: boolean }[] };
    expect(status.runs[0]).toMatchObject({ id: rec.id, state: 'ready', live: true });

    // A's supervisor SIGKILLed: its processes live on, carrying A's marker, with nobody watching.
    const killed = await inNs(['sh', '-c', 'kill -9 $1 && while grep -Eqs "^State:[[:space:]]+[^ZX[:space:]]" /proc/$1/status; do sleep 0.01; done', 'sh', String(rec.supervisor.pid)], { PATH: process.env.PATH });
    expect(killed.exitCode, killed.stderr).toBe(0);
    expect(await alive([rec.supervisor.pid])).toEqual([]);
    expect(await alive(pidsA)).toEqual(pidsA);
    const after = await cli(['doctor', '--only', 'procs.leftover', '--json'], envB);
    expect(after.exitCode).toBe(1);
    const c2 = (JSON.parse(after.stdout) as { checks: Check[] }).checks[0];
    expect(c2.status).toBe('fail');
    expect((c2.evidence.processes as { pid: number }[]).map((p) => p.pid).sort()).toEqual([...pidsA].sort());
    expect(c2.evidence.otherRuns).toBeUndefined();
    const stop = await cli(['teardown', '--orphans', '--grace', '1', '--json'], envB);
    expect(stop.exitCode, stop.stdout).toBe(0);
    const td2 = JSON.parse(stop.stdout) as { stopped: { pid: number; signal: string | null }[]; otherRuns: unknown[] };
    expect(td2.otherRuns).toEqual([]);
    expect(td2.stopped.map((s) => s.pid).sort()).toEqual([...pidsA].sort());
    expect(await alive(pidsA)).toEqual([]);
  }, 60_000);
});
