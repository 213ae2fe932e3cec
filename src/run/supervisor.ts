import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import type { Plan, PlannedProcess } from '../plan/types.js';
import { logPath } from './paths.js';
import type { DescendantRecord, ProcessRecord, ProcessState, RunRecord, RunState } from './types.js';
import { followFile, type Follower } from './follow.js';
import { classifyLine, compileLogPattern, frontendLive, modelListed, pollHttp, workerHealthy, stripAnsi } from './readiness.js';
import { spawnLogged, type ExitInfo, type Spawned } from './spawn.js';
import { diagnoseLog, type Diagnosis } from './diagnosis.js';
import { curlLine, type ReadyWorker, type UpEvent } from './events.js';
import { writeRun } from './state.js';
import { stopTargets, type StopResult, type StopTarget, type Survivor } from './stop.js';
import { descendants, mergeDescendants, readStartTicks } from './proc.js';
import type { Recipe } from '../recipe/schema.js';

// The lifecycle of one `up`: start processes in plan order (a worker after its predecessor's KV
// line), follow their logs, judge readiness, then supervise until a signal or a death; on any
// failure name the process, diagnose its log, stop everything. run.json is rewritten after every
// state change so status/teardown find everything even if we are killed with SIGKILL.

export interface SupervisorOptions {
  plan: Plan;
  /** Recorded in run.json so doctor judges the live run by the recipe it really runs. */
  recipe?: Recipe;
  runId: string;
  stateDir: string;
  /** The user's environment; each process gets it plus the plan's env. */
  env: NodeJS.ProcessEnv;
  readyTimeoutMs: number;
  graceMs: number;
  detach: boolean;
  /** Install SIGINT/SIGTERM/SIGHUP handlers (off in tests that drive stop() themselves). */
  handleSignals?: boolean;
  /** HTTP readiness poll interval (default 50 ms). */
  pollMs?: number;
  /** How often engine descendants are re-scanned while running (default 2000 ms). */
  descendantsMs?: number;
}

export type SupervisorResult =
  | { outcome: 'detached'; code: 0 }
  | { outcome: 'stopped'; code: 0 | 1; signal: string }
  | { outcome: 'failed'; code: 1; reason: string };

const LAST_LINES = 20;

interface Proc {
  spec: PlannedProcess;
  rec: ProcessRecord;
  spawned: Spawned | null;
  follower: Follower | null;
  lines: string[];
  kvPattern: RegExp | null;
  kvSeen: boolean;
  healthy: boolean;
  live: boolean;
  exit: ExitInfo | null;
  startedMs: number;
  lockWait: { lockPath: string; elapsedS: number | null } | null;
}

export class Supervisor extends EventEmitter {
  readonly record: RunRecord;
  private readonly procs: Proc[];
  private readonly abort = new AbortController();
  private timers: NodeJS.Timeout[] = [];
  private finishing = false;
  private everReady = false;
  private readonly t0 = Date.now();
  private resolveDone!: (r: SupervisorResult) => void;
  private readonly done = new Promise<SupervisorResult>((r) => (this.resolveDone = r));
  private writing: Promise<void> = Promise.resolve();
  private writeQueued = false;
  private readonly signalHandlers: [NodeJS.Signals, () => void][] = [];

  constructor(private readonly o: SupervisorOptions) {
    super();
    const now = new Date().toISOString();
    this.procs = o.plan.processes.map((spec) => ({
      spec,
      rec: {
        name: spec.name, role: spec.role, pid: null, pgid: null, startTicks: null, startedAt: null,
        argv: spec.argv, env: spec.env, ports: spec.ports, gpuMemoryUtilization: spec.gpuMemoryUtilization,
        state: 'waiting', kvTokens: null, exitCode: null, signal: null,
        log: logPath(o.stateDir, o.runId, spec.name), descendants: [],
      },
      spawned: null, follower: null, lines: [], kvPattern: spec.ready.logPattern ? compileLogPattern(spec.ready.logPattern) : null,
      kvSeen: false, healthy: false, live: false, exit: null, startedMs: 0, lockWait: null,
    }));
    this.record = {
      id: o.runId, recipe: o.plan.recipe, model: o.plan.model, createdAt: now, updatedAt: now,
      supervisor: { pid: process.pid, startTicks: readStartTicks(process.pid), detached: o.detach },
      state: 'starting', frontendUrl: o.plan.frontendUrl, plan: o.plan, processes: this.procs.map((p) => p.rec),
      ...(o.recipe ? { recipeSpec: o.recipe } : {}),
    };
  }

  /** A listener that throws (a renderer on a dead terminal) must never stop supervision. */
  private emitEvent(e: UpEvent): void {
    try {
      this.emit('event', e);
    } catch (err) {
      try {
        this.emit('warning', `cannot show the ${e.event} event: ${(err as Error)?.message ?? String(err)}`);
      } catch {
        // nowhere left to say it
      }
    }
  }

  /**
   * Last resort for an error nothing else caught (up installs it for uncaught exceptions and
   * rejections): stop every process we started rather than die and leave them running.
   */
  async crash(err: unknown): Promise<void> {
    await this.fail({ reason: `unexpected error: ${(err as Error)?.message ?? String(err)}`, proc: null, diagnosis: null });
  }

  /** Runs until detached-and-ready, a user stop, or a failure. */
  async run(): Promise<SupervisorResult> {
    // The per-run discovery directory (DYN_FILE_KV) exists before anyone registers in it.
    const dirs = new Set(this.o.plan.processes.map((p) => p.env.DYN_FILE_KV).filter((d): d is string => Boolean(d)));
    for (const d of dirs) mkdirSync(d, { recursive: true });
    await writeRun(this.o.stateDir, this.record);
    if (this.o.handleSignals !== false) {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as NodeJS.Signals[]) {
        const h = () => void this.stop(sig);
        process.on(sig, h);
        this.signalHandlers.push([sig, h]);
      }
    }
    this.timers.push(setTimeout(() => void this.onDeadline(), this.o.readyTimeoutMs));
    const refresh = setInterval(() => this.refreshDescendants(true), this.o.descendantsMs ?? 2000);
    refresh.unref();
    this.timers.push(refresh);
    this.startEligible();
    const result = await this.done;
    for (const [sig, h] of this.signalHandlers) process.off(sig, h);
    return result;
  }

  /** A user stop (Ctrl-C, SIGTERM, SIGHUP): stop everything, exit 0. */
  async stop(signal: string): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    const { stopped, remaining } = await this.stopAll();
    this.setRunState('stopped');
    await this.flush();
    this.emitEvent({ event: 'stopped', runId: this.o.runId, reason: 'user', stopped, remaining });
    // Something that survived SIGKILL is a failed stop, as for teardown.
    this.resolveDone({ outcome: 'stopped', code: remaining.length > 0 ? 1 : 0, signal });
  }

  // ---- starting ---------------------------------------------------------------------------

  private startEligible(): void {
    if (this.finishing) return;
    for (const p of this.procs) {
      if (p.rec.state !== 'waiting') continue;
      const ok = p.spec.waitFor.every((name) => {
        const dep = this.procs.find((q) => q.spec.name === name);
        // The predecessor's KV line (its memory is taken); a process without one: its readiness.
        return !dep || (dep.kvPattern ? dep.kvSeen : dep.healthy);
      });
      if (ok) this.start(p);
    }
  }

  private start(p: Proc): void {
    const env = { ...this.o.env, ...p.spec.env };
    const s = spawnLogged(p.spec.argv, env, p.rec.log);
    p.spawned = s;
    p.startedMs = Date.now();
    Object.assign(p.rec, { pid: s.pid, pgid: s.pgid, startTicks: s.startTicks, startedAt: s.startedAt });
    this.emitEvent({ event: 'starting', process: p.spec.name, pid: s.pid, log: p.rec.log, waitedFor: p.spec.waitFor });
    this.setState(p, 'starting');
    p.follower = followFile(p.rec.log, (line) => this.onLine(p, line), { pollMs: 100 });
    s.exited.then((info) => void this.onExit(p, info));
    if (p.spec.role === 'frontend') void this.watchFrontend(p);
    else if (!p.kvPattern) void this.watchHealth(p);
  }

  // ---- following ----------------------------------------------------------------------------

  private onLine(p: Proc, raw: string): void {
    const line = stripAnsi(raw);
    p.lines.push(line);
    if (p.lines.length > LAST_LINES) p.lines.shift();
    this.emitEvent({ event: 'line', process: p.spec.name, text: line });
    if (this.finishing) return;
    const sig = classifyLine(line, p.kvSeen ? null : p.kvPattern);
    if (!sig) return;
    if (sig.kind === 'kv') {
      p.kvSeen = true;
      p.rec.kvTokens = sig.tokens;
      this.emitEvent({ event: 'log-ready', process: p.spec.name, kvTokens: sig.tokens, ms: Date.now() - p.startedMs });
      if (!p.healthy) this.setState(p, 'kv-allocated');
      else this.persist();
      this.startEligible();
      if (!p.healthy) void this.watchHealth(p);
    } else if (sig.kind === 'loading') {
      if (p.rec.state === 'starting') this.setState(p, 'loading');
    } else if (sig.kind === 'lock-wait') {
      p.lockWait = { lockPath: sig.lockPath, elapsedS: sig.elapsedS };
      if (p.rec.state === 'starting') this.setState(p, 'loading');
      // Once another worker of this model has loaded it, the download is done: nothing legitimate
      // still holds the lock, so this worker would wait forever (FACTS §6, the "second worker
      // never started" case).
      const loaded = this.procs.find((q) => q !== p && q.spec.role !== 'frontend' && (q.kvSeen || q.healthy));
      if (loaded) {
        void this.fail({
          reason: `${p.spec.name} is blocked on the Hugging Face download lock ${sig.lockPath}`,
          proc: p,
          hint: `${loaded.spec.name} already loaded ${this.o.plan.model}, so the download is finished and the lock is held by another process or stale; ` +
            `see who holds it with \`dynamo-dev doctor --only hf.locks\` (or \`fuser ${sig.lockPath}\`), stop that process, ` +
            `or delete the lock file if no process holds it; then run up again`,
        });
      }
    }
  }

  // ---- HTTP readiness -----------------------------------------------------------------------

  private async watchHealth(p: Proc): Promise<void> {
    const url = p.spec.ready.http;
    try {
      if (url) await pollHttp(url, workerHealthy, { intervalMs: this.o.pollMs ?? 50, requestTimeoutMs: 1000, signal: this.abort.signal });
    } catch {
      return; // aborted
    }
    if (this.finishing || p.exit) return;
    p.healthy = true;
    this.setState(p, 'ready');
    this.startEligible();
    this.checkAllReady();
  }

  private async watchFrontend(p: Proc): Promise<void> {
    const base = this.o.plan.frontendUrl;
    const o = { intervalMs: this.o.pollMs ?? 50, requestTimeoutMs: 1000, signal: this.abort.signal };
    try {
      await pollHttp(`${base}/live`, frontendLive, o);
      if (this.finishing || p.exit) return;
      p.live = true;
      this.setState(p, 'loading');
      await pollHttp(p.spec.ready.http ?? `${base}/v1/models`, (r) => modelListed(r, this.o.plan.model), { ...o, intervalMs: Math.max(o.intervalMs, 100) });
    } catch {
      return;
    }
    if (this.finishing || p.exit) return;
    p.healthy = true;
    this.setState(p, 'ready');
    this.checkAllReady();
  }

  private checkAllReady(): void {
    if (this.finishing || this.everReady || !this.procs.every((p) => p.rec.state === 'ready')) return;
    this.everReady = true;
    clearTimeout(this.timers[0]);
    this.refreshDescendants(false);
    this.setRunState('ready');
    const workers: ReadyWorker[] = this.procs.filter((p) => p.spec.role !== 'frontend').map((p) => ({
      name: p.spec.name, role: p.spec.role, kvTokens: p.rec.kvTokens, gpuMemoryUtilization: p.spec.gpuMemoryUtilization,
      log: p.rec.log, health: p.spec.ready.http ?? null,
    }));
    this.emitEvent({
      event: 'ready', runId: this.o.runId, url: this.o.plan.frontendUrl, model: this.o.plan.model,
      curl: curlLine(this.o.plan.frontendUrl, this.o.plan.model), workers,
      logs: Object.fromEntries(this.procs.map((p) => [p.spec.name, p.rec.log])), ms: Date.now() - this.t0, detached: this.o.detach,
    });
    if (this.o.detach) void this.detach();
  }

  private async detach(): Promise<void> {
    this.finishing = true;
    this.abort.abort(new Error('detached'));
    for (const t of this.timers) clearTimeout(t);
    for (const p of this.procs) {
      p.follower?.stop();
      p.spawned?.unref();
    }
    await this.flush();
    this.resolveDone({ outcome: 'detached', code: 0 });
  }

  // ---- failures -----------------------------------------------------------------------------

  private async onExit(p: Proc, info: ExitInfo): Promise<void> {
    p.exit = info;
    p.rec.exitCode = info.code;
    p.rec.signal = info.signal;
    if (this.finishing) {
      if (p.rec.state !== 'failed') this.setState(p, 'stopped');
      return;
    }
    p.follower?.drain();
    this.setState(p, 'failed');
    const { top } = await diagnoseLog(p.rec.log);
    if (this.finishing) return;
    this.emitEvent({
      event: 'exited', process: p.spec.name, code: info.code, signal: info.signal, error: info.error, diagnosis: top, afterReady: this.everReady,
      lastLines: [...p.lines], log: p.rec.log,
    });
    const reason = info.error
      ? `${p.spec.name} could not be started: ${info.error}`
      : `${p.spec.name} ${info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`} ${this.everReady ? 'after the run was ready' : 'before it was ready'}`;
    const hint = info.error ? `check the interpreter: --python PATH, $DYNAMO_DEV_PYTHON or the recipe's python (now ${p.spec.argv[0]})` : undefined;
    await this.fail({ reason, proc: p, diagnosis: top, hint });
  }

  private async onDeadline(): Promise<void> {
    if (this.finishing || this.everReady) return;
    // A worker behind is the cause; the frontend waiting for the model is only its symptom.
    const stuck = this.procs.find((p) => p.spec.role !== 'frontend' && p.rec.state !== 'ready')
      ?? this.procs.find((p) => p.rec.state !== 'ready') ?? null;
    const what = stuck ? `${stuck.spec.name} is still ${describeWait(stuck)}` : 'not every process is ready';
    await this.fail({ reason: `not ready after ${Number((this.o.readyTimeoutMs / 1000).toFixed(1))} s: ${what}`, proc: stuck });
  }

  private async fail(f: { reason: string; proc: Proc | null; diagnosis?: Diagnosis | null; hint?: string }): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    const p = f.proc;
    let diagnosis = f.diagnosis ?? null;
    if (p && f.diagnosis === undefined) {
      p.follower?.drain();
      diagnosis = (await diagnoseLog(p.rec.log)).top;
    }
    if (p && p.rec.state !== 'failed') this.setState(p, 'failed');
    this.emitEvent({
      event: 'failed', reason: f.reason, process: p?.spec.name ?? null, diagnosis, hint: f.hint ?? null,
      lastLines: p ? [...p.lines] : [], log: p?.rec.log ?? null,
    });
    const { stopped, remaining } = await this.stopAll();
    this.setRunState('failed');
    await this.flush();
    this.emitEvent({ event: 'stopped', runId: this.o.runId, reason: 'failure', stopped, remaining });
    this.resolveDone({ outcome: 'failed', code: 1, reason: f.reason });
  }

  // ---- stopping -----------------------------------------------------------------------------

  private async stopAll(): Promise<{ stopped: StopResult[]; remaining: Survivor[] }> {
    this.abort.abort(new Error('stopping'));
    for (const t of this.timers) clearTimeout(t);
    this.refreshDescendants(false);
    this.setRunState('stopping');
    const targets: StopTarget[] = [];
    for (const p of this.procs) {
      if (p.rec.pid === null || p.rec.pgid === null) {
        if (p.rec.state === 'waiting') this.setState(p, 'stopped');
        continue;
      }
      // A leader that already exited may leave its group behind (an engine child outliving a
      // crashed worker): stopTargets follows the group while any member lives.
      targets.push({ name: p.spec.name, pid: p.rec.pid, pgid: p.rec.pgid, startTicks: p.rec.startTicks, descendants: p.rec.descendants });
    }
    const res = targets.length > 0 ? await stopTargets(targets, { graceMs: this.o.graceMs }) : { stopped: [], remaining: [] };
    // Collect exit codes of the children we signalled (they are gone: the group is empty).
    await Promise.race([
      Promise.all(this.procs.map((p) => p.spawned?.exited ?? Promise.resolve(null))),
      new Promise((r) => setTimeout(r, 300).unref()),
    ]);
    for (const p of this.procs) {
      p.follower?.stop();
      if (p.rec.state !== 'failed' && p.rec.state !== 'stopped') this.setState(p, 'stopped');
    }
    return res;
  }

  // ---- record keeping -------------------------------------------------------------------------

  private setState(p: Proc, state: ProcessState): void {
    p.rec.state = state;
    this.emitEvent({ event: 'state', process: p.spec.name, state, kvTokens: p.rec.kvTokens, pid: p.rec.pid });
    if (state !== 'stopped' && state !== 'failed') this.refreshOne(p);
    this.persist();
  }

  private setRunState(state: RunState): void {
    this.record.state = state;
    this.persist();
  }

  /** Engine processes (VLLM::*) under each running child, kept so teardown can verify them. */
  private refreshDescendants(persist: boolean): void {
    let changed = false;
    for (const p of this.procs) changed = this.refreshOne(p) || changed;
    if (changed && persist) this.persist();
  }

  private refreshOne(p: Proc): boolean {
    if (p.rec.pid === null || p.exit) return false;
    let found: DescendantRecord[];
    try {
      found = descendants(p.rec.pid);
    } catch {
      return false;
    }
    const merged = mergeDescendants(p.rec.descendants, found);
    if (merged === null) return false;
    p.rec.descendants = merged;
    return true;
  }

  /** Coalesced, ordered writes of run.json (atomic in writeRun); events never wait on the disk. */
  private persist(): void {
    if (this.writeQueued) return;
    this.writeQueued = true;
    this.writing = this.writing.then(async () => {
      this.writeQueued = false;
      this.record.updatedAt = new Date().toISOString();
      try {
        await writeRun(this.o.stateDir, this.record);
      } catch (err) {
        this.emit('warning', `cannot write run.json: ${(err as Error).message}`);
      }
    });
  }

  private async flush(): Promise<void> {
    this.persist();
    await this.writing;
  }
}

function describeWait(p: Proc): string {
  switch (p.rec.state) {
    case 'waiting':
      return `waiting for ${p.spec.waitFor.join(', ')}`;
    case 'starting':
      return 'starting (nothing useful logged yet)';
    case 'loading':
      if (p.lockWait) return `waiting for the Hugging Face lock ${p.lockWait.lockPath}`;
      return p.spec.role === 'frontend' ? 'waiting for the model in /v1/models' : 'loading (no KV cache size logged yet)';
    case 'kv-allocated':
      return `not answering ready on ${p.spec.ready.http}`;
    default:
      return p.rec.state;
  }
}
