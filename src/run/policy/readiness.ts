import type { PlannedProcess } from '../../plan/types.js';
import type { HttpProbe } from '../../host/types.js';
import { classifyLine, compileLogPattern, frontendLive, modelListed, pollHttp, workerHealthy, type PollDeps } from '../readiness.js';
import type { ProcessState } from '../types.js';

// Readiness of one process as a unit: its log lines and HTTP answers become state transitions.
// What counts as ready is data (a ReadinessPlan: the KV pattern and HTTP steps), built by
// readinessPlan(); the judgements of single lines and answers live in ../readiness.ts. The
// coordinator owns the state and the run; this unit only asks and tells it through ReadinessHost.

/** One HTTP condition, polled until it holds. */
export interface HttpStep {
  url: string;
  judge: (p: HttpProbe) => boolean;
  intervalMs: number;
  /** State once this step holds (the last step always leads to `ready`). */
  then?: ProcessState;
}

export interface ReadinessPlan {
  /** The KV line; when set, the steps start after it (a worker's /health means nothing before). */
  kvPattern: RegExp | null;
  /** In order; all holding = ready. None: ready at once (after the KV line if there is one). */
  steps: HttpStep[];
}

/** Pure: how a planned process proves it is ready. */
export function readinessPlan(spec: PlannedProcess, run: { frontendUrl: string; model: string }, pollMs: number): ReadinessPlan {
  if (spec.role === 'frontend') {
    const base = run.frontendUrl;
    return {
      kvPattern: null,
      steps: [
        { url: `${base}/live`, judge: frontendLive, intervalMs: pollMs, then: 'loading' },
        // The model list changes rarely and costs the frontend more than /live.
        { url: spec.ready.http ?? `${base}/v1/models`, judge: (r) => modelListed(r, run.model), intervalMs: Math.max(pollMs, 100) },
      ],
    };
  }
  const url = spec.ready.http;
  return {
    kvPattern: spec.ready.logPattern ? compileLogPattern(spec.ready.logPattern) : null,
    steps: url ? [{ url, judge: workerHealthy, intervalMs: pollMs }] : [],
  };
}

export interface LockWait { lockPath: string; elapsedS: number | null }

/** What the unit needs from the coordinator. */
export interface ReadinessHost {
  state(): ProcessState;
  setState(s: ProcessState): void;
  /** The KV line was seen (tokens to record and announce), before the state change. */
  kvLine(tokens: number): void;
  /** Recorded facts changed without a state change (write run.json). */
  changed(): void;
  /** Processes waiting for this one may start now (its KV line). */
  gateOpened(): void;
  /** The log says the process waits for the Hugging Face download lock (the failure policy judges it). */
  lockWait(w: LockWait): void;
  /** Every step holds; the state is already `ready`. */
  ready(): void;
  /** False once the run is stopping, failed or detached: no more transitions. */
  running(): boolean;
  exited(): boolean;
}

export class ProcessReadiness {
  kvSeen = false;
  healthy = false;
  lockWait: LockWait | null = null;

  constructor(
    readonly plan: ReadinessPlan,
    private readonly host: ReadinessHost,
    private readonly deps: PollDeps,
    /** Aborted by the coordinator on stop, failure, deadline and detach. */
    private readonly signal: AbortSignal,
  ) {}

  /** Whether processes that wait for this one may start: its KV line, or its readiness without one. */
  get gateOpen(): boolean {
    return this.plan.kvPattern ? this.kvSeen : this.healthy;
  }

  /** The process was spawned. */
  started(): void {
    if (!this.plan.kvPattern) void this.poll();
  }

  /** One log line (ANSI already stripped). */
  onLine(line: string): void {
    if (!this.host.running()) return;
    const sig = classifyLine(line, this.kvSeen ? null : this.plan.kvPattern);
    if (!sig) return;
    const h = this.host;
    if (sig.kind === 'kv') {
      this.kvSeen = true;
      h.kvLine(sig.tokens);
      if (!this.healthy) h.setState('kv-allocated');
      else h.changed();
      h.gateOpened();
      if (!this.healthy) void this.poll();
    } else if (sig.kind === 'loading') {
      if (h.state() === 'starting') h.setState('loading');
    } else if (sig.kind === 'lock-wait') {
      this.lockWait = { lockPath: sig.lockPath, elapsedS: sig.elapsedS };
      if (h.state() === 'starting') h.setState('loading');
      h.lockWait(this.lockWait);
    }
  }

  private async poll(): Promise<void> {
    const { steps } = this.plan;
    const h = this.host;
    try {
      for (let i = 0; i < steps.length; i++) {
        const s = steps[i];
        await pollHttp(s.url, s.judge, { intervalMs: s.intervalMs, requestTimeoutMs: 1000, signal: this.signal }, this.deps);
        if (i === steps.length - 1) break;
        if (!h.running() || h.exited()) return;
        if (s.then) h.setState(s.then);
      }
    } catch {
      return; // aborted
    }
    if (!h.running() || h.exited()) return;
    this.healthy = true;
    h.setState('ready');
    h.ready();
  }
}
