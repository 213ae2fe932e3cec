import { Supervisor, type SupervisorOptions } from '../../src/run/supervisor.js';
import type { SupervisorDeps } from '../../src/run/supervisor-deps.js';
import type { UpEvent } from '../../src/run/events.js';
import type { Plan, PlannedProcess } from '../../src/plan/types.js';
import type { ExitInfo, Spawned } from '../../src/run/spawn.js';
import type { RunRecord } from '../../src/run/types.js';
import type { HttpProbe } from '../../src/host/types.js';
import { startStop } from '../../src/run/stop.js';
import { KV_LINE_PATTERN } from '../../src/plan/types.js';
import { FakeClock } from './fake-clock.js';
import { FakeMachine } from './fake-machine.js';

// The supervisor coordinator with every dependency faked (SupervisorDeps), for the lifecycle tests:
// processes live in a FakeMachine, logs are pushed line by line, HTTP answers come from a table,
// time moves only when told, and every call to the machine is recorded.

export const KV_LINE = 'INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens';

export function plannedWorker(name: string, port: number, waitFor: string[]): PlannedProcess {
  return {
    name, role: 'agg', argv: ['python3', '-m', 'dynamo.vllm'], env: {}, ports: { system: port }, gpuMemoryUtilization: 0.4, waitFor,
    ready: { logPattern: KV_LINE_PATTERN, http: `http://w/${port}/health` }, publishesKvEvents: false, kvTokensEstimate: null,
  };
}

export const basePlan: Plan = {
  recipe: 'agg-router', model: 'm', engine: 'vllm', gpu: { index: 0, totalMiB: null }, budget: { fractionSum: 0.8, limit: 0.9, budgetMiB: null },
  maxModelLen: 4096, router: { mode: 'kv', kvEvents: true }, disaggregated: false, frontendUrl: 'http://f', runDir: '/state/runs/r1',
  processes: [
    { ...plannedWorker('frontend', 0, []), role: 'frontend', gpuMemoryUtilization: null, ready: { http: 'http://f/v1/models' } },
    plannedWorker('agg-0', 8081, []),
    plannedWorker('agg-1', 8082, ['agg-0']),
  ],
};

export interface HarnessOptions extends Partial<Pick<SupervisorOptions, 'readyTimeoutMs' | 'graceMs' | 'plan' | 'detach' | 'watch' | 'handleSignals' | 'descendantsMs' | 'env' | 'restart'>> {
  /** Answers before the default table (undefined: fall through to it). */
  get?: (url: string) => HttpProbe | undefined;
  post?: (url: string, body: unknown) => HttpProbe;
  stopRequest?: () => string | null;
  /** Replaces the spawn of the named process (e.g. a start that failed: pid null). */
  spawnAs?: (name: string) => Partial<Spawned> | undefined;
  deps?: Partial<SupervisorDeps>;
  /** The clock's time when the supervisor is made (up did other work first). */
  startAt?: number;
}

export function supervisorHarness(opts: HarnessOptions = {}) {
  const clock = new FakeClock();
  clock.t = opts.startAt ?? 0;
  const machine = new FakeMachine();
  const lines = new Map<string, (line: string) => void>();
  const exits = new Map<string, (e: ExitInfo) => void>();
  const healthy = new Set<string>();
  const writes: RunRecord['state'][] = [];
  /** Every write of run.json: the run state and each process's state at that moment. */
  const snapshots: string[] = [];
  const calls: string[] = [];
  const unrefs: string[] = [];
  const followerStops: string[] = [];
  const drains: string[] = [];
  /** What was on disk at each write (each process's pid) and each `starting` told: the order of the two matters. */
  const journal: string[] = [];
  /** The environment each process was spawned with. */
  const envs = new Map<string, NodeJS.ProcessEnv>();
  let nextPid = 100;
  const nameOf = (path: string) => path.replace(/^.*\//, '').replace(/\.log$/, '');
  const deps: Partial<SupervisorDeps> = {
    clock,
    spawn(argv, env, log) {
      const name = nameOf(log);
      calls.push(`spawn ${name}`);
      envs.set(name, env);
      const exited = new Promise<ExitInfo>((r) => exits.set(name, r));
      const own = opts.spawnAs?.(name);
      if (own) return { pid: null, pgid: null, startTicks: null, startedAt: '2026-01-01T00:00:00Z', exited, unref() {}, ...own };
      const pid = nextPid++;
      machine.add({ pid, ppid: 11, pgid: pid, startTicks: 1000 + pid, cmd: argv.join(' ') });
      return { pid, pgid: pid, startTicks: 1000 + pid, startedAt: '2026-01-01T00:00:00Z', exited, unref: () => void unrefs.push(name) };
    },
    follow(path, onLine) {
      const name = nameOf(path);
      lines.set(name, onLine);
      return { drain: () => void drains.push(name), stop: () => void followerStops.push(name), offset: 0 };
    },
    async get(url): Promise<HttpProbe> {
      const own = opts.get?.(url);
      if (own) return own;
      const ok = healthy.has(url);
      if (url === 'http://f/live') return { url, ok: true, status: 200, body: { status: 'live' }, error: null };
      if (url === 'http://f/v1/models') return { url, ok: true, status: 200, body: { data: ok ? [{ id: 'm' }] : [] }, error: null };
      return { url, ok, status: ok ? 200 : 503, body: { status: ok ? 'ready' : 'notready' }, error: null };
    },
    async post(url, body) {
      return opts.post ? opts.post(url, body) : { url, ok: false, status: 404, body: null, error: null };
    },
    diagnose: async () => ({ top: null }),
    descendants: () => [],
    // The fake machine's processes hold every port they are asked on.
    portListenedBy: async () => 'ours',
    freeBytes: () => null,
    // The real stop loop against the fake machine on the supervisor's clock; a killed fake process
    // "exits" for the supervisor.
    stop: (targets, o) => {
      calls.push(`stop ${targets.map((t) => t.name).join(',')}`);
      const d = machine.deps();
      const sync = () => void (machine.t = clock.now());
      return startStop(targets, o, {
        ...d,
        clock,
        scan: () => (sync(), d.scan()),
        // The looks between full scans (the run's own processes) see the same time.
        scanAround: d.scanAround && ((pids: number[]) => (sync(), d.scanAround!(pids))),
        kill(pid, sig) {
          sync();
          d.kill(pid, sig);
          for (const t of targets) if ((pid === -t.pgid || pid === t.pid) && !machine.alive(t.pid)) exits.get(t.name)?.({ code: null, signal: sig, error: null });
        },
      });
    },
    writeRun: (_dir, rec) => {
      writes.push(rec.state);
      snapshots.push(`${rec.state}: ${rec.processes.map((p) => `${p.name}=${p.state}`).join(',')}`);
      journal.push(`write ${rec.processes.map((p) => `${p.name}=${p.pid}`).join(',')}`);
    },
    mkdirs: (dir) => void calls.push(`mkdir ${dir}`),
    marked: async () => [],
    self: { pid: 11, startTicks: 6 },
    stopRequest: () => opts.stopRequest?.() ?? null,
    lockHolders: async () => [{ pid: 4242, cmd: 'python3 download.py' }],
    ...opts.deps,
  };
  const sup = new Supervisor({
    plan: opts.plan ?? basePlan, runId: 'r1', stateDir: '/state', env: opts.env ?? { HOME: '/home/u' },
    readyTimeoutMs: opts.readyTimeoutMs ?? 60_000, graceMs: opts.graceMs ?? 1000,
    detach: opts.detach ?? false, ...(opts.watch !== undefined ? { watch: opts.watch } : {}), handleSignals: 'handleSignals' in opts ? opts.handleSignals : false, runMarker: '/real/state/runs/r1',
    ...(opts.descendantsMs !== undefined ? { descendantsMs: opts.descendantsMs } : {}),
    ...(opts.restart ? { restart: opts.restart } : {}),
  }, deps);
  const events: UpEvent[] = [];
  const warnings: string[] = [];
  sup.on('event', (e: UpEvent) => {
    events.push(e);
    if (e.event === 'starting') journal.push(`starting ${e.process}`);
  });
  sup.on('warning', (w: string) => void warnings.push(w));
  const states = () => Object.fromEntries(sup.record.processes.map((p) => [p.name, p.state]));
  const of = <K extends UpEvent['event']>(k: K) => events.filter((e): e is Extract<UpEvent, { event: K }> => e.event === k);
  /** Brings every process of basePlan to ready (frontend lists the model, workers' KV lines and health). */
  const allReady = async () => {
    await clock.advance(0);
    lines.get('agg-0')!(KV_LINE);
    await clock.advance(0);
    lines.get('agg-1')!(KV_LINE);
    healthy.add('http://w/8081/health');
    healthy.add('http://w/8082/health');
    healthy.add('http://f/v1/models');
    await clock.advance(200);
  };
  return { sup, clock, machine, lines, exits, healthy, writes, snapshots, events, warnings, states, of, calls, unrefs, followerStops, drains, journal, envs, allReady };
}
