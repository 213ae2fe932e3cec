import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';
import { listenerPids } from '../helpers/runs.js';

// `ready` is judged on the run's own processes: a frontend port answered by someone else's
// frontend (a run of another state directory, or a second `up --name` that chose the same ports
// at the same moment) is not this run's. And the port choice of `up --name`s started together is
// made one at a time, so each gets ports of its own.

const up = upHarness('dd-own-');
const servers: Server[] = [];
afterEach(async () => {
  for (const srv of servers.splice(0)) srv.close();
  await up.cleanup();
});

/** Listens on the port (all addresses) when it is free; resolves either way: the port is taken after. */
function hold(port: number): Promise<void> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve());
    srv.listen(port, '0.0.0.0', () => {
      servers.push(srv);
      resolve();
    });
  });
}

interface StatusRun { id: string; name: string | null; state: string; frontendUrl: string }

describe('ready means our own processes answer', () => {
  it('two up --name started at once beside a live run: each ready on ports of its own, each port held by its own frontend', async () => {
    const s = await up.setup();
    const a = await runCli(['up', 'mocker', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 30_000 });
    expect(a.code, a.stderr).toBe(0);
    const [c, d] = await Promise.all(['c', 'd'].map((name) => runCli(['up', 'mocker', '--name', name, '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 60_000 })));
    expect([c.code, d.code], c.stdout + c.stderr + d.stdout + d.stderr).toEqual([0, 0]);
    const runs = JSON.parse((await runCli(['status', '--json'], s.env)).stdout).runs as StatusRun[];
    expect(runs.map((r) => [r.name ?? '-', r.state]).sort()).toEqual([['-', 'ready'], ['c', 'ready'], ['d', 'ready']]);
    expect(new Set(runs.map((r) => r.frontendUrl)).size).toBe(3);
    // Each run's frontend port is listened on by that run's own frontend.
    for (const rec of records(s.stateDir)) {
      const fe = rec.processes.find((p) => p.name === 'frontend')!;
      expect(listenerPids(fe.ports.http!), `${rec.id} :${fe.ports.http}`).toContain(fe.pid);
    }
  });

  it('its frontend port taken by another state directory\'s run after the ports check, before our frontend binds: never ready; failed, naming the port in use', { timeout: 90_000 }, async () => {
    const s = await up.setup();
    const other = await up.setup();
    // Our frontend binds a while after it starts, as the real one does (after its runtime).
    const env = { ...s.env, FAKE_FRONTEND_BIND_AFTER: '6' };
    const ours = up.startUp(['up', 'mocker', '--detach', '--no-preflight', '--json', ...s.sets], env);
    await ours.waitEvent((e) => e.event === 'starting' && e.process === 'frontend', 30_000);
    // Meanwhile a run of another state directory takes that port (free when ours was checked) and is ready.
    const a = await runCli(['up', 'mocker', '--detach', '--no-preflight', ...other.sets.slice(2), '--set', `frontend.httpPort=${s.ports.http}`], other.env, { timeoutMs: 30_000 });
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const end = await ours.exit;
    expect(ours.events.filter((e) => e.event === 'ready')).toEqual([]);
    expect(end.code, ours.stdout() + ours.stderr()).toBe(1);
    const failed = ours.events.find((e) => e.event === 'failed')!;
    expect(failed.process).toBe('frontend');
    expect(JSON.stringify(failed)).toMatch(/already in use/i);
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
    // The other run is untouched and still answers.
    const st = JSON.parse((await runCli(['status', '--json'], other.env)).stdout).runs as StatusRun[];
    expect(st.map((x) => x.state)).toEqual(['ready']);
  });

  it('up --name whose system ports cannot move up past 32767 (DYN_SYSTEM_PORT is signed 16-bit): the nearest free range below, ready', async () => {
    const s = await up.setup();
    // The mocker's two workers take 32766-32767; 32767 is in use: no range fits above.
    await hold(32_767);
    const sets = [...s.sets.slice(0, 2), '--set', 'ports.system=32766', ...s.sets.slice(4)];
    const r = await runCli(['up', 'mocker', '--name', 'top', '--detach', '--no-preflight', ...sets], s.env, { timeoutMs: 60_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const m = /ports: http \d+, system (\d+)-(\d+)/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(Number(m![2])).toBeLessThanOrEqual(32_766);
    expect(r.stdout).toMatch(/the recipe's .*32767.* in use/);
    const rec = records(s.stateDir)[0];
    expect(rec.processes.filter((p) => p.name !== 'frontend').map((p) => p.ports.system)).toEqual([Number(m![1]), Number(m![2])]);
  });

  it('up --name: the recipe\'s own port held by another program (no run of ours) is named as moved, "in use"', async () => {
    const s = await up.setup();
    await hold(s.ports.http);
    const r = await runCli(['up', 'mocker', '--name', 'beside', '--detach', '--no-preflight', ...s.sets], s.env, { timeoutMs: 60_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const m = new RegExp(`^ports: http (\\d+), system \\S+ \\(the recipe's ${s.ports.http} in use\\)$`, 'm').exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(Number(m![1])).not.toBe(s.ports.http);
    expect(records(s.stateDir)[0].frontendUrl).toBe(`http://127.0.0.1:${m![1]}`);
  });
});
