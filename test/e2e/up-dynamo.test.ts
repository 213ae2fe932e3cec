import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { freeBlock } from '../helpers/ports.js';
import { records, survivors } from '../helpers/runs.js';
import { stopRuns } from '../helpers/up-run.js';

// What upstream Dynamo contradicts, through the built binary with the fakes: input the real
// Dynamo cannot run is refused before anything starts, and plans follow the installed release.

const homes: ReturnType<typeof tempHome>[] = [];
const live: { stateDir: string; env: Record<string, string | undefined> }[] = [];
afterEach(async () => {
  // A failed test must not leave its fake processes running: teardown what it started.
  for (const l of live.splice(0)) await stopRuns(l.stateDir, l.env);
  for (const h of homes.splice(0)) h.cleanup();
});

/** A free block below 32768 (system ports are signed 16-bit), in 2,000-4,999: apart from the other e2e files' ranges. */
const portBlock = () => freeBlock(2_000, 300, 10, [0, 1, 2]);
const home = () => {
  const h = tempHome('dd-updyn-');
  homes.push(h);
  return h;
};
const nothingStarted = (stateDir: string) => !existsSync(join(stateDir, 'runs')) || readdirSync(join(stateDir, 'runs')).length === 0;

describe('up refuses what Dynamo cannot run: exit 2, one line, nothing started', () => {
  it('a recipe with discovery: mem names the field and the reason', async () => {
    const h = home();
    const file = join(h.dir, 'mem.yaml');
    writeFileSync(file, 'name: mem\nengine: mocker\ndiscovery: mem\nworkers:\n  - role: agg\n');
    const r = await runCli(['up', file], fakeEnv(h, { python: true }));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${file}: discovery: "mem" cannot work: the "mem" backend keeps registrations inside one process`);
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('a system port of 40000 (Dynamo reads it as a signed 16-bit number)', async () => {
    const h = home();
    const r = await runCli(['up', 'mocker', '--set', 'ports.system=40000'], fakeEnv(h, { python: true }));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('mocker (built-in): ports.system: must be <= 32767: Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number (got 40000)');
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('--python pointing at an interpreter without Dynamo: preflight names it, nothing started, exit 1', async () => {
    const h = home();
    const base = await portBlock();
    const env = fakeEnv(h, { python: false });
    live.push({ stateDir: h.stateDir, env });
    const r = await runCli(['up', 'mocker', '--python', 'python3', '--json', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`], env);
    expect(r.code).toBe(1);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const pre = events.find((e) => e.event === 'preflight')!;
    const py = pre.checks.find((c: { id: string }) => c.id === 'python.env');
    expect(py.status).toBe('fail');
    expect(py.summary).toMatch(/^python3 cannot import dynamo, dynamo\.frontend, dynamo\.mocker: dynamo \(ModuleNotFoundError/);
    expect(py.fix).toContain('python3 -m pip install ai-dynamo`');
    expect(events.map((e) => e.event)).not.toContain('starting');
    // (Other checks may fail too on a busy machine: leftover processes of other tests.)
    expect(events.at(-1)).toMatchObject({ event: 'failed', reason: expect.stringMatching(/^preflight: (.+, )?python\.env(, .+)? failed; nothing was started$/) });
    expect(nothingStarted(h.stateDir)).toBe(true);
  });
});

describe('plans follow the installed Dynamo', () => {
  it('--dry-run reads the version of the interpreter it would start and says so', async () => {
    const h = home();
    const plan = async (vars: Record<string, string>, python = true) => {
      const r = await runCli(['up', 'agg-router-approx', '--dry-run', '--json'], fakeEnv(h, { python, vars }));
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout) as { dynamo: unknown; processes: { name: string; argv: string[] }[] };
    };
    const now = await plan({});
    expect(now.dynamo).toEqual({ version: '1.6.1', plannedFor: '1.6.1', assumed: false });
    expect(now.processes[0].argv).toContain('--no-router-kv-events');
    const none = await plan({}, false);
    expect(none.dynamo).toEqual({ version: null, plannedFor: '1.6.1', assumed: true });
    const text = await runCli(['up', 'mocker', '--dry-run'], fakeEnv(h, { python: true }));
    expect(text.stdout.split('\n')[0]).toMatch(/Dynamo 1\.6\.1$/);
  });

  it('VLLM_LOGGING_LEVEL=WARNING hides the KV line readiness waits for: a warning before anything starts', async () => {
    const h = home();
    const r = await runCli(['up', 'agg', '--dry-run'], fakeEnv(h, { python: true, vars: { VLLM_LOGGING_LEVEL: 'WARNING' } }));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('dynamo-dev: warning: VLLM_LOGGING_LEVEL=WARNING hides vLLM\'s INFO line "GPU KV cache size: N tokens" that agg-0 must log to be ready');
    const quiet = await runCli(['up', 'mocker', '--dry-run'], fakeEnv(h, { python: true, vars: { VLLM_LOGGING_LEVEL: 'WARNING' } }));
    expect(quiet.stderr).toBe('');
  });
});

describe('up mocker through the fakes (mocker /health never ready, as the real one)', () => {
  it('--detach: ready once the frontend counts both workers and answers; status says ready; teardown leaves nothing', async () => {
    const h = home();
    const base = await portBlock();
    const env = fakeEnv(h, { python: true, vars: { FAKE_ENGINE_MAX_S: '120' } });
    live.push({ stateDir: h.stateDir, env });
    // A deadline of its own, so a run that never gets ready says what it waited for.
    const r = await runCli(['up', 'mocker', '--detach', '--json', '--no-preflight', '--ready-timeout', '25', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`], env, { timeoutMs: 40_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const ready = events.find((e) => e.event === 'ready')!;
    expect(ready.workers.map((w: { name: string; health: string | null }) => [w.name, w.health])).toEqual([['agg-0', null], ['agg-1', null]]);
    // The fake mocker's /health says notready, as the real one's does: nobody waited for it.
    const health = await fetch(`http://127.0.0.1:${base + 1}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'notready', endpoints: { generate: 'ready' } });
    const st = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { runs: { state: string; processes: { name: string; ready: boolean }[] }[] };
    expect(st.runs[0].state).toBe('ready');
    expect(st.runs[0].processes.map((p) => [p.name, p.ready])).toEqual([['frontend', true], ['agg-0', true], ['agg-1', true]]);
    const td = await runCli(['teardown', '--json'], env, { timeoutMs: 20_000 });
    expect(td.code).toBe(0);
    expect(records(h.stateDir)).toHaveLength(1);
    expect(survivors(h.stateDir)).toEqual([]);
    // No worker needed SIGKILL: every stop was a SIGTERM.
    expect((JSON.parse(td.stdout) as { stopped: { signal: string | null }[] }).stopped.map((s) => s.signal)).not.toContain('SIGKILL');
    live.length = 0;
  }, 60_000);
});
