import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { cacheQwen3, records, survivors } from '../helpers/runs.js';
import { BIN, runCli } from '../helpers/cli.js';
import { waitUntil } from '../helpers/proc-trees.js';
import { isSameProcess } from '../../src/run/proc.js';
import { upHarness, type Ev } from '../helpers/up-run.js';

// `up` end to end through the built binary with the fake frontend and workers (test/fixtures/python)
// and the fake nvidia-smi. Each test uses its own port block so parallel test files never collide.

const up = upHarness('dd-up-');
const children = up.children;
const setup = up.setup;
const startUp = up.startUp;
afterEach(() => up.cleanup());

const NO_PREFLIGHT = ['--no-preflight', '--json'];

describe('up: start, readiness, detach', () => {
  it('agg-router --detach: exit 0 once both workers logged their KV size and the model is listed; status shows them; teardown leaves nothing', async () => {
    const s = await setup();
    const r = await runCli(['up', 'agg-router', '--detach', ...NO_PREFLIGHT, ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Ev);
    for (const e of events) expect(typeof e.ts).toBe('string');
    const kinds = events.map((e) => e.event);
    expect(kinds[0]).toBe('plan');
    expect(kinds.at(-1)).toBe('ready');
    expect(events.filter((e) => e.event === 'log-ready').map((e) => e.process).sort()).toEqual(['agg-0', 'agg-1']);
    const ready = events.at(-1)!;
    expect(ready.url).toBe(`http://127.0.0.1:${s.ports.http}`);
    expect(ready.workers.map((w: any) => [w.name, w.kvTokens > 4096]), r.stdout).toEqual([['agg-0', true], ['agg-1', true]]);
    // The frontend really lists the model.
    const models = await (await fetch(`${ready.url}/v1/models`)).json() as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toContain('Qwen/Qwen3-0.6B');

    const st = await runCli(['status', '--json'], s.env);
    const run = JSON.parse(st.stdout).runs[0];
    expect(run.state, st.stdout).toBe('ready');
    const workers = run.processes.filter((p: any) => p.name.startsWith('agg-'));
    expect(workers.map((p: any) => [p.name, p.ready, p.kvTokens])).toEqual([
      ['agg-0', true, ready.workers[0].kvTokens], ['agg-1', true, ready.workers[1].kvTokens],
    ]);
    // The engine children were recorded, so teardown can verify them.
    const rec = records(s.stateDir)[0];
    expect(rec.processes.find((p) => p.name === 'agg-0')!.descendants.some((d) => d.cmd.includes('VLLM::EngineCore'))).toBe(true);

    // doctor judges the live run: the frontend is healthy and lists the model.
    const doc = await runCli(['doctor', '--only', 'frontend.models', '--json'], s.env);
    expect(JSON.parse(doc.stdout).checks[0], doc.stdout + doc.stderr).toMatchObject({ id: 'frontend.models', status: 'pass' });

    // One up per state directory: the live detached run refuses a second up, naming it.
    const second = await runCli(['up', 'agg', ...NO_PREFLIGHT, ...s.sets], s.env);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(rec.id);

    const td = await runCli(['teardown'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(survivors(s.stateDir)).toEqual([]);
  });

  it('disagg-same-gpu: decode starts first, prefill only after decode logged its KV size; each has its own ports', async () => {
    const s = await setup();
    const up = startUp(['up', 'disagg-same-gpu', ...NO_PREFLIGHT, ...s.sets], s.env);
    await up.waitEvent((e) => e.event === 'ready');
    const order = up.events.filter((e) => e.event === 'starting' || e.event === 'log-ready').map((e) => `${e.event} ${e.process}`);
    expect(order.indexOf('starting decode-0')).toBeLessThan(order.indexOf('log-ready decode-0'));
    expect(order.indexOf('log-ready decode-0')).toBeLessThan(order.indexOf('starting prefill-0'));
    const plan = up.events[0].plan;
    const dec = plan.processes.find((p: any) => p.name === 'decode-0');
    const pre = plan.processes.find((p: any) => p.name === 'prefill-0');
    expect(dec.env.DYN_SYSTEM_PORT).not.toBe(pre.env.DYN_SYSTEM_PORT);
    expect(dec.env.VLLM_NIXL_SIDE_CHANNEL_PORT).not.toBe(pre.env.VLLM_NIXL_SIDE_CHANNEL_PORT);
    expect(pre.argv.join(' ')).toContain(`"endpoint":"tcp://*:${s.ports.kvEvents}"`);
    expect(dec.argv).not.toContain('--kv-events-config');
    up.child.kill('SIGTERM');
    expect((await up.exit).code).toBe(0);
    expect(survivors(s.stateDir)).toEqual([]);
  });
});

describe('up: failures are named, diagnosed, and leave nothing running', () => {
  const cases: [string, string, string, string | null][] = [
    ['Error 804', 'error804', 'cuda.error804', null],
    ['no GPU visible (the real 1.6.1 worker\'s output)', 'no-gpu', 'gpu.not-visible', null],
    ['free memory less than desired', 'free-memory', 'vllm.free-memory', null],
    ['UCX without an active-message transport', 'ucx-no-am', 'ucx.no-am-transport', 'disagg-same-gpu'],
    // The real NIXL 1.4.1 lines (test/fixtures/nixl): UCX_TLS=shm,self and UCX_TLS=ud.
    ['shared memory without peer failure handling (real NIXL lines)', 'nixl-shm-self', 'ucx.no-am-transport', 'disagg-same-gpu'],
    ['a UCX_TLS naming a transport the machine lacks (real NIXL lines)', 'nixl-ud', 'ucx.error', 'disagg-same-gpu'],
  ];
  for (const [what, scenario, code, recipe] of cases) {
    it(`a worker dying with ${what}: exited event names it with the diagnosis, exit 1, nothing left`, async () => {
      const s = await setup();
      s.env[`FAKE_WORKER_SCENARIO_${s.ports.system + 1}`] = scenario;
      const r = await runCli(['up', recipe ?? 'agg-router', ...NO_PREFLIGHT, ...s.sets], s.env, { timeoutMs: 25_000 });
      expect(r.code).toBe(1);
      const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Ev);
      const exited = events.find((e) => e.event === 'exited')!;
      expect(exited.process).toBe(recipe ? 'prefill-0' : 'agg-1');
      expect(exited.code).toBe(1);
      expect(exited.diagnosis.code).toBe(code);
      expect(exited.diagnosis.explanation.length).toBeGreaterThan(20);
      expect(exited.diagnosis.fix.length).toBeGreaterThan(10);
      expect(exited.lastLines.length).toBeGreaterThan(0);
      expect(events.find((e) => e.event === 'failed')!.reason).toContain(exited.process);
      expect(events.at(-1)!.event).toBe('stopped');
      expect(survivors(s.stateDir)).toEqual([]);
      const rec = records(s.stateDir)[0];
      expect(rec.state).toBe('failed');
    });
  }

  it('a worker dying after ready: foreground up reports it with its diagnosis, stops the rest, exit 1', async () => {
    // agg-1 dies 3 s after its own ready: time enough for the whole run to be ready first, even loaded.
    const s = await setup({ FAKE_DIE_AFTER_MS: '3000' });
    s.env[`FAKE_WORKER_SCENARIO_${s.ports.system + 1}`] = 'die-after-ready';
    const up = startUp(['up', 'agg-router', ...NO_PREFLIGHT, ...s.sets], s.env);
    await up.waitEvent((e) => e.event === 'ready');
    const exited = await up.waitEvent((e) => e.event === 'exited');
    expect(exited).toMatchObject({ process: 'agg-1', code: 1, afterReady: true });
    expect(exited.diagnosis.code).toBe('cuda.oom');
    expect((await up.exit).code).toBe(1);
    expect(up.events.at(-1)!.event).toBe('stopped');
    expect(survivors(s.stateDir)).toEqual([]);
  });

  it('the readiness deadline: names the worker that is behind and what it waits for, stops everything, exit 1', async () => {
    // The deadline leaves a loaded 2-core CI machine seconds to start Python and reach the slow
    // phase (with 1.5 s the worker was sometimes still "starting" when it passed).
    const s = await setup({ FAKE_WORKER_SLOW_MS: '60000' });
    s.env[`FAKE_WORKER_SCENARIO_${s.ports.system}`] = 'slow';
    const r = await runCli(['up', 'agg', '--ready-timeout', '4', ...NO_PREFLIGHT, ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Ev);
    const failed = events.find((e) => e.event === 'failed')!;
    expect(failed.reason).toBe('not ready after 4 s: agg-0 is still loading (no KV cache size logged yet)');
    expect(failed.process).toBe('agg-0');
    expect(failed.lastLines.at(-1)).toContain('Model loading took');
    expect(survivors(s.stateDir)).toEqual([]);
  });

  it('a taken port: preflight fails naming the port and its holder, nothing starts', async () => {
    const s = await setup();
    cacheQwen3(s.hfCache);
    const server: Server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(s.ports.http, '0.0.0.0', () => resolve());
    });
    try {
      const r = await runCli(['up', 'agg', ...s.sets], s.env, { timeoutMs: 25_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${s.ports.http}`);
      expect(r.stderr).toContain(`pid ${process.pid}`);
      expect(r.stderr).toMatch(/preflight failed/);
      expect(records(s.stateDir)).toEqual([]);
    } finally {
      server.close();
    }
  });
  it('a taken system port under --no-preflight: up still fails at once naming the port and its holder, nothing starts', async () => {
    const s = await setup();
    cacheQwen3(s.hfCache);
    // A real vLLM worker whose system port is taken logs the bind error and goes on without /health
    // (test/fixtures/engine/cpu-system-port-taken.log): without this check up waited out its deadline.
    const server: Server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(s.ports.system, '0.0.0.0', () => resolve());
    });
    try {
      const t0 = Date.now();
      const r = await runCli(['up', 'agg', '--no-preflight', ...s.sets], s.env, { timeoutMs: 25_000 });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(r.stderr).toContain(`port ${s.ports.system} (agg-0.system) is in use by pid ${process.pid}`);
      expect(r.stderr).toContain('ports.free failed (--no-preflight skips doctor\'s checks, never the ports of the plan); nothing was started');
      expect(r.stderr).toContain('✗ a port of the plan is taken: nothing was started (--no-preflight skips doctor\'s checks, never this one)');
      expect(r.stderr).not.toContain('skip with --no-preflight');
      // Only the ports were asked: no other check is listed.
      expect(r.stderr).not.toMatch(/Python environment|GPU driver/);
      expect(records(s.stateDir)).toEqual([]);
      expect(survivors(s.stateDir)).toEqual([]);
    } finally {
      server.close();
    }
  });
});

describe('up: signals', () => {
  it('Ctrl-C (SIGINT) in the foreground: every process and engine child gone, exit 0', async () => {
    const s = await setup();
    const up = startUp(['up', 'agg-router', ...NO_PREFLIGHT, ...s.sets], s.env);
    await up.waitEvent((e) => e.event === 'ready');
    const t0 = Date.now();
    up.child.kill('SIGINT');
    const stopped = await up.waitEvent((e) => e.event === 'stopped');
    expect(stopped.reason).toBe('user');
    expect((await up.exit).code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(survivors(s.stateDir)).toEqual([]);
    expect(records(s.stateDir)[0].state).toBe('stopped');
  });

  it('SIGTERM with a worker that ignores SIGTERM: it is SIGKILLed at the grace deadline, nothing remains', async () => {
    const s = await setup();
    s.env[`FAKE_WORKER_SCENARIO_${s.ports.system + 1}`] = 'ignore-sigterm';
    const up = startUp(['up', 'agg-router', '--grace', '1', ...NO_PREFLIGHT, ...s.sets], s.env);
    await up.waitEvent((e) => e.event === 'ready');
    const t0 = Date.now();
    up.child.kill('SIGTERM');
    const stopped = await up.waitEvent((e) => e.event === 'stopped');
    const byName = Object.fromEntries(stopped.stopped.map((x: any) => [x.name, x.signal]));
    expect(byName).toMatchObject({ 'agg-0': 'SIGTERM', 'agg-1': 'SIGKILL', frontend: 'SIGTERM' });
    expect(stopped.remaining).toEqual([]);
    expect((await up.exit).code).toBe(0);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(6000);
    expect(survivors(s.stateDir)).toEqual([]);
  });

  it('the terminal closes under the live view (SIGHUP, then every write fails with EIO): the stop still finishes, SIGKILL included', async () => {
    const s = await setup();
    s.env[`FAKE_WORKER_SCENARIO_${s.ports.system + 1}`] = 'ignore-sigterm';
    // `script` gives up a pseudo-terminal (so the ink view renders: it needs a width and a height);
    // killing script closes it.
    const cmd = `stty cols 100 rows 40; exec ${process.execPath} ${BIN} up agg-router --no-preflight --grace 1 ${s.sets.join(' ')}`;
    const term = spawn('script', ['-qfec', cmd, '/dev/null'], { env: s.env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(term);
    let screen = '';
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`not ready on the terminal within 20 s:\n${screen}`)), 20_000);
      term.stdout!.on('data', (d) => {
        screen += d;
        if (screen.includes('supervising: Ctrl-C stops every process')) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    // Hang up once the view has drawn the summary: the stop that follows redraws the rows (stopping,
    // stopped), and every one of those writes fails with EIO.
    const sup = records(s.stateDir)[0].supervisor;
    term.kill('SIGKILL');
    await waitUntil(() => !isSameProcess(sup.pid, sup.startTicks), 'the supervisor to finish stopping', 15_000);
    expect(survivors(s.stateDir)).toEqual([]);
    const rec = records(s.stateDir)[0];
    expect(rec.state).toBe('stopped');
    expect(rec.processes.map((p) => [p.name, p.state])).toEqual([['frontend', 'stopped'], ['agg-0', 'stopped'], ['agg-1', 'stopped']]);
    // The worker that ignored SIGTERM was killed at the grace deadline, after the terminal was gone.
    expect(rec.processes[2].signal).toBe('SIGKILL');
  });

  it('supervisor killed with SIGKILL: status says orphaned, teardown removes everything', async () => {
    const s = await setup();
    const up = startUp(['up', 'agg-router', ...NO_PREFLIGHT, ...s.sets], s.env);
    await up.waitEvent((e) => e.event === 'ready');
    up.child.kill('SIGKILL');
    await up.exit;
    const st = await runCli(['status', '--json'], s.env);
    expect(JSON.parse(st.stdout).runs[0].state).toBe('orphaned');
    expect(survivors(s.stateDir).length).toBeGreaterThan(0);
    const td = await runCli(['teardown'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(survivors(s.stateDir)).toEqual([]);
  });

  it('a second up while one runs in the foreground: refused with the running run\'s id', async () => {
    const s = await setup();
    const up = startUp(['up', 'agg', ...NO_PREFLIGHT, ...s.sets], s.env);
    const plan = await up.waitEvent((e) => e.event === 'plan');
    const second = await runCli(['up', 'agg', ...NO_PREFLIGHT, ...s.sets], s.env);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(plan.runId);
    await up.waitEvent((e) => e.event === 'ready');
    up.child.kill('SIGTERM');
    expect((await up.exit).code).toBe(0);
  });
});

describe('up: plan output', () => {
  it('--dry-run --json prints the plan document and starts nothing; a plan that cannot fit exits 2 with the numbers', async () => {
    const s = await setup();
    const r = await runCli(['up', 'agg-router', '--dry-run', '--json', ...s.sets], s.env);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan).toMatchObject({ recipe: 'agg-router', model: 'Qwen/Qwen3-0.6B', gpu: { index: 0, totalMiB: 8188 }, budget: { fractionSum: 0.76, limit: 0.9 } });
    expect(plan.processes.map((p: any) => p.name)).toEqual(['frontend', 'agg-0', 'agg-1']);
    for (const p of plan.processes) expect(Object.keys(p)).toEqual(expect.arrayContaining(['name', 'role', 'argv', 'env', 'ports', 'gpuMemoryUtilization', 'waitFor', 'ready']));
    expect(records(s.stateDir)).toEqual([]);

    const over = await runCli(['up', 'agg-router', '--dry-run', '--set', 'workers.0.gpuMemoryUtilization=0.6'], s.env);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/add up to 1.2 \(agg-0 0.6 \+ agg-1 0.6\), over memory.limit 0.9/);
    const bad = await runCli(['up', 'no-such-recipe', '--dry-run'], s.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown recipe "no-such-recipe"');
  });

  it('with the model cached: each worker\'s KV estimate in the plan; a fraction too small for maxModelLen exits 2 with the numbers', async () => {
    const s = await setup();
    cacheQwen3(s.hfCache);
    const r = await runCli(['up', 'agg-router', '--dry-run', '--json', ...s.sets], s.env);
    expect(r.code, r.stderr).toBe(0);
    // 8188 MiB x 0.38 = 3111.44 - 1144.41 MiB weights - 400 MiB overhead = 1567.03 MiB / 114,688 B per token
    expect(JSON.parse(r.stdout).processes.map((p: any) => p.kvTokensEstimate)).toEqual([null, 14_327, 14_327]);
    const small = await runCli(['up', 'agg-router', '--set', 'workers.0.gpuMemoryUtilization=0.2', ...NO_PREFLIGHT, ...s.sets], s.env);
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/agg-0 at gpuMemoryUtilization 0.2 gets ~1638 MiB of 8188 MiB; .* ~\d+ KV tokens at 114,688 bytes\/token, fewer than maxModelLen 4096/);
    expect(records(s.stateDir)).toEqual([]);
  });

  it('--dry-run for humans: a table of processes, argv, env, ports and fractions', async () => {
    const s = await setup();
    const r = await runCli(['up', 'disagg-same-gpu', '--dry-run', ...s.sets], s.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/decode-0\s+decode\s+system=\d+ nixlSideChannel=\d+\s+0\.38/);
    expect(r.stdout).toMatch(/prefill-0 .*after decode-0 KV line/);
    expect(r.stdout).toContain('--disaggregation-mode prefill');
    expect(r.stdout).toContain('VLLM_NIXL_SIDE_CHANNEL_PORT=');
    expect(r.stdout).toContain('fractions sum to 0.76 of limit 0.9 = 6,223 MiB');
  });
});
