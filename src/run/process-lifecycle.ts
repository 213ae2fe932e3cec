import { planContext } from '../diagnose/choose-fix.js';
import type { Plan, PlannedProcess } from '../plan/types.js';
import { recordDescendants } from './descendant-watch.js';
import type { Diagnosis } from './diagnosis.js';
import type { UpEvent } from './events.js';
import type { Follower } from './follow.js';
import type { FailureView } from './policy/failure.js';
import { ProcessReadiness, readinessPlan, type LockWait } from './policy/readiness.js';
import { stripAnsi } from './readiness.js';
import { newProcessRecord } from './run-record.js';
import { RUN_MARKER } from './run-scan.js';
import type { ExitInfo, Spawned } from './spawn.js';
import { processTargets, type StopTarget } from './stop.js';
import type { SupervisorDeps } from './supervisor-deps.js';
import { endDiagnosis } from './supervisor-types.js';
import type { RestartJob } from './restart-job.js';
import type { ProcessRecord, ProcessState } from './types.js';

// One process of a run, from spawn to end: its start (own group, log appended, the run marker in
// its environment), following its log, its readiness (policy/readiness.ts), a silent wait on a
// download lock, its descendants, its end's diagnosis. It reports upward only through its
// LifecycleHost, as readiness reports to it: the Supervisor (the run: order, policy, state, the
// detached IPC) decides what a line, a ready or an exit means for the run.

/** The last lines of its log kept for a failure report. */
const LAST_LINES = 20;

/** What the process tells the run. */
export interface LifecycleHost {
  /** An event of the run about this process (rendered by up, read by bench). */
  event(e: UpEvent): void;
  /** run.json should be rewritten (coalesced). */
  persist(): void;
  /** run.json rewritten now (a pid on disk before anyone hears of it). */
  writeNow(): void;
  /** Its readiness gate opened (its KV line): processes waiting for it may start. */
  gateOpened(): void;
  /** Ready by its own signs. */
  ready(): void;
  /** Its log says it waits on a download lock (the failure policy judges it). */
  lockWait(w: LockWait): void;
  /** Its log says the model cannot be loaded and no retry mends it (a file that does not parse). */
  modelError?(error: string): void;
  /** It ended, however (its exit already recorded: `exit`, the record's exitCode, signal, endedAt). */
  exited(info: ExitInfo): void;
  /** False once the run is stopping, failed or detached. */
  running(): boolean;
}

/** What every process of a run shares. */
export interface LifecycleEnv {
  plan: Plan;
  stateDir: string;
  runId: string;
  /** The user's environment (each process gets it plus the plan's env and the marker). */
  env: NodeJS.ProcessEnv;
  marker: string;
  pollMs: number;
  followPollMs: number;
  d: SupervisorDeps;
}

export class ProcessLifecycle {
  readonly rec: ProcessRecord;
  readiness!: ProcessReadiness;
  spawned: Spawned | null = null;
  follower: Follower | null = null;
  lines: string[] = [];
  exit: ExitInfo | null = null;
  startedMs = 0;
  /** A restart of this process in progress (process-restart.ts). */
  restart: RestartJob | null = null;
  /** The wait before its last restart by `up --restart` (the crash-loop back-off; null: none yet). */
  backoffMs: number | null = null;
  /** The lock-wait hint shown (who holds the lock), repeated by a deadline failure. */
  lockHintText: string | null = null;
  private hintedKvEvents = false;
  private lockHinted = false;

  constructor(readonly spec: PlannedProcess, private readonly env: LifecycleEnv, private readonly host: LifecycleHost, signal: AbortSignal) {
    this.rec = newProcessRecord(spec, env.stateDir, env.runId);
    this.newReadiness(signal);
  }

  get name(): string {
    return this.spec.name;
  }

  /** Readiness judged afresh (a restart), its polls ended by `signal`. */
  newReadiness(signal: AbortSignal): void {
    const { d } = this.env;
    this.readiness = new ProcessReadiness(readinessPlan(this.spec, this.env.plan, this.env.pollMs), this.readinessHost(), { get: d.get, post: d.post, clock: d.clock }, signal);
  }

  /** `offset`: where in its log this start's lines begin (a restart appends to the old log). */
  start(offset = 0): void {
    const { d } = this.env;
    // The marker: everything this process ever forks inherits it, so status and teardown find
    // even what escapes its group or what a SIGKILLed `up` never recorded.
    const env = { ...this.env.env, ...this.spec.env, [RUN_MARKER]: this.env.marker };
    const s = d.spawn(this.spec.argv, env, this.rec.log);
    this.spawned = s;
    this.startedMs = d.clock.now();
    Object.assign(this.rec, { pid: s.pid, pgid: s.pgid, startTicks: s.startTicks, startedAt: s.startedAt });
    this.rec.state = 'starting';
    // On disk before anyone hears of it: `up` SIGKILLed right after `starting` leaves the pid recorded.
    this.host.writeNow();
    this.host.event({ event: 'starting', process: this.name, pid: s.pid, log: this.rec.log, waitedFor: this.spec.waitFor });
    this.setState('starting');
    // fs.watch (inotify) wakes the follower on every write; the poll only catches what it misses,
    // so an idle run reads nothing 10 times a second (issue 9: <= 0.5% CPU idle after ready).
    this.follower = d.follow(this.rec.log, (line) => this.onLine(line), { pollMs: this.env.followPollMs, ...(offset > 0 ? { offset } : {}) });
    // Only this spawn's exit is this start's: a restart may start the next one before the old
    // exit is reported (its SIGKILL under load), which must not end the new one (h32, real engine).
    s.exited.then((info) => {
      if (this.spawned === s) this.onExit(info);
    });
    this.readiness.started();
  }

  private onExit(info: ExitInfo): void {
    this.exit = info;
    this.rec.exitCode = info.code;
    this.rec.signal = info.signal;
    this.rec.endedAt = new Date().toISOString();
    this.host.exited(info);
  }

  private onLine(raw: string): void {
    const line = stripAnsi(raw);
    this.lines.push(line);
    if (this.lines.length > LAST_LINES) this.lines.shift();
    this.host.event({ event: 'line', process: this.name, text: line });
    // The router's own diagnostic: cache-aware routing is off while the run comes up "ready".
    if (!this.hintedKvEvents && /kv_event_publisher_disabled/.test(line)) {
      this.hintedKvEvents = true;
      this.host.event({
        event: 'hint', process: this.name, code: 'kv_event_publisher_disabled',
        text: 'a worker publishes no KV events: the KV router ignores the cache (see `dynamo-dev doctor --only kv.events`)',
      });
    }
    this.readiness.onLine(line);
  }

  private readinessHost() {
    const h = this.host;
    return {
      state: () => this.rec.state,
      setState: (s: ProcessState) => this.setState(s),
      kvLine: (tokens: number) => {
        this.rec.kvTokens = tokens;
        const ms = this.env.d.clock.now() - this.startedMs;
        this.restart?.note({ event: 'log-ready', process: this.name, kvTokens: tokens, ms });
        h.event({ event: 'log-ready', process: this.name, kvTokens: tokens, ms });
      },
      // Stryker disable next-line ArrowFunction: equivalent: readiness calls changed() only for a KV line after healthy, which cannot happen (policy/readiness.ts, onLine)
      changed: () => h.persist(),
      gateOpened: () => h.gateOpened(),
      lockWait: (w: LockWait) => h.lockWait(w),
      // A restart is judged by its own deadline.
      modelError: (error: string) => void (this.restart ? undefined : h.modelError?.(error)),
      ownsPort: async (port: number) => (await this.env.d.portListenedBy(port, this.livePids())) !== 'other',
      ready: () => h.ready(),
      running: () => h.running(),
      exited: () => this.exit !== null,
    };
  }

  setState(state: ProcessState): void {
    this.rec.state = state;
    this.host.event({ event: 'state', process: this.name, state, kvTokens: this.rec.kvTokens, pid: this.rec.pid });
    if (state !== 'stopped' && state !== 'failed') this.refreshDescendants();
    this.host.persist();
  }

  /** Engine processes (VLLM::*) under it while it runs, kept so teardown can verify them; whether that changed. */
  refreshDescendants(): boolean {
    return this.exit === null && recordDescendants(this.rec, this.env.d.descendants);
  }

  /** Its log's diagnosis (the signature table's root cause), kept in its record. */
  async diagnose(): Promise<Diagnosis | null> {
    const { top } = await this.env.d.diagnose(this.rec.log, planContext(this.env.plan));
    this.rec.diagnosis = endDiagnosis(top);
    return top;
  }

  /** Its group (and recorded engines) as a stop's target. */
  targets(): StopTarget[] {
    return processTargets([this.rec]);
  }

  /** Its live pids now: the one we spawned and its descendants (nothing once ended). */
  livePids(): number[] {
    if (this.rec.pid === null || this.exit !== null) return [];
    const out = [this.rec.pid];
    try {
      for (const d of this.env.d.descendants(this.rec.pid)) out.push(d.pid);
    } catch {
      // a look that failed: the leader alone
    }
    return out;
  }

  /** As the failure policy sees it; `frontend`: whose readiness a viaFrontend worker waits on. */
  failureView(frontend: ProcessLifecycle | undefined): FailureView {
    const r = this.readiness;
    return {
      name: this.name, role: this.spec.role, state: this.rec.state, waitFor: this.spec.waitFor, readyHttp: this.spec.ready.http,
      lockWait: r.lockWait, loaded: r.kvSeen || r.healthy,
      waitingFor: r.plan.viaFrontend ? frontend?.readiness.waitingFor ?? null : r.waitingFor,
      viaFrontend: Boolean(r.plan.viaFrontend),
    };
  }

  /**
   * A worker coming up for `silentMs` or more, with no KV line yet: it may be waiting on a lock,
   * silently or not (other threads of it may keep logging meanwhile; issue 29), so its log's
   * activity is no sign either way.
   */
  silentSince(now: number, silentMs: number): boolean {
    return this.spec.role !== 'frontend' && this.rec.pid !== null && this.exit === null && !this.restart && !this.readiness.lockWait &&
      (this.rec.state === 'starting' || this.rec.state === 'loading') && now - this.startedMs >= silentMs;
  }

  /**
   * The real worker waits on a download lock silently: huggingface_hub logs its "Still waiting to
   * acquire lock on ..." at INFO under a WARNING-level logger (1.33.0 utils/_fixes.py,
   * utils/logging.py), vLLM says nothing, and Dynamo's prefetch (hf-hub 0.4.3) retries for ~5 s
   * before it fails. So the facts it leaves are read instead: a lock of the model held by a process
   * outside its own tree is its wait. Returns the wait found (recorded in its readiness), or null.
   */
  async findSilentLockWait(): Promise<LockWait | null> {
    const { d } = this.env;
    const held = await d.heldModelLocks(this.env.plan.model, { ...this.env.env, ...this.spec.env }).catch(() => []);
    if (!this.host.running()) return null;
    if (held.length === 0 || this.exit !== null || this.readiness.kvSeen || this.readiness.lockWait) return null;
    const own = new Set<number>([this.rec.pid!]);
    try {
      for (const x of d.descendants(this.rec.pid!)) own.add(x.pid);
    } catch {
      // the leader alone
    }
    // Its own download holds the lock while it works: that is progress, not a wait.
    const lock = held.find((l) => l.holders.some((h) => !own.has(h.pid)));
    if (!lock) return null;
    this.readiness.lockWait = { lockPath: lock.path, elapsedS: null };
    if (this.rec.state === 'starting') this.setState('loading');
    return this.readiness.lockWait;
  }

  /** Once: the row says whose lock it waits for (as `doctor --only hf.locks` would). `runPids`: the run's live pids now. */
  async lockHint(w: LockWait, runPids: () => Set<number>): Promise<void> {
    if (this.lockHinted) return;
    this.lockHinted = true;
    const holders = await this.env.d.lockHolders(w.lockPath).catch(() => []);
    if (!this.host.running()) return;
    const h = holders.find((x) => x.pid > 0);
    const ours = h ? runPids() : new Set<number>();
    const cmd = h?.cmd ? h.cmd.replace(/\s+/g, ' ').trim() : '';
    // The holder's command line, cut after a whole word: enough to recognise it.
    const short = cmd.length > 60 ? `${cmd.slice(0, 60).replace(/\s+\S*$/, '')}…` : cmd;
    const who = !h ? 'a process this machine cannot see (another container?) or none: a stale lock'
      : `pid ${h.pid}${ours.has(h.pid) ? ' (this run)' : ''}${short ? ` (${short})` : ''}`;
    const text = `waiting for the Hugging Face download lock held by ${who}; see \`dynamo-dev doctor --only hf.locks\``;
    this.lockHintText = text;
    // Kept in run.json: bench's hf.no-lock-wait gate judges a wait the log never mentions.
    this.rec.lockWait = { lockPath: w.lockPath, holderPid: h?.pid ?? null, holderCmd: h?.cmd ?? null, at: new Date().toISOString() };
    this.host.persist();
    this.host.event({ event: 'hint', process: this.name, code: 'hf.lock-wait', text });
  }
}
