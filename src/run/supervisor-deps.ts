import { closeSync, constants as fsConstants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import type { FixContext } from '../diagnose/choose-fix.js';
import { realClock, type Clock } from './clock.js';
import { diagnoseLog, type Diagnosis } from './diagnosis.js';
import { followFile, type FollowOptions, type Follower } from './follow.js';
import { freeBytes } from '../host/files/free-space.js';
import { getJson, postJson } from '../host/net/http.js';
import { descendants, readCmdline, readPidNamespace, readStartTicks } from './proc.js';
import type { HttpGetter, HttpPoster } from './readiness.js';
import { spawnLogged, type Spawned } from './spawn.js';
import { writeRunSync } from './state.js';
import { markedProcesses, readBootId } from './run-scan.js';
import { startStop, type StopHandle, type StopOptions, type StopTarget } from './stop.js';
import type { DescendantRecord, RunRecord } from './types.js';
import { readStopRequest } from './stop-request.js';
import { appendRestartEvent, takeRestartRequests, type RestartEvent, type RestartRequest } from './restart-request.js';

// Everything the supervisor does to the machine, in one place: the real implementations by
// default, fakes in tests (new Supervisor(options, { spawn: fakeSpawn, ... })).

export interface SupervisorDeps {
  clock: Clock;
  /** Starts a process in its own group, output appended to the log file. */
  spawn(argv: string[], env: NodeJS.ProcessEnv, logFile: string): Spawned;
  follow(path: string, onLine: (line: string) => void, opts: FollowOptions): Follower;
  get: HttpGetter;
  /** The readiness completion (a POST to the frontend). */
  post: HttpPoster;
  /** The log's root cause from the signature table. */
  /** `ctx`: the run's plan as the fix chooser reads it (choose-fix.ts). */
  diagnose(logFile: string, ctx?: FixContext): Promise<{ top: Diagnosis | null }>;
  /** Live descendants of pid (engine processes to record for teardown). */
  descendants(pid: number): DescendantRecord[];
  /** SIGTERM -> grace -> SIGKILL of the targets (stop.ts), escalatable. */
  stop(targets: StopTarget[], opts: StopOptions): StopHandle;
  /** Writes run.json whole and at once (synchronous: see RunWriter). */
  writeRun(stateDir: string, rec: RunRecord): void;
  mkdirs(dir: string): void;
  /** Live processes carrying the run marker (started since `minTicks`): what a stop must not leave. */
  marked(marker: string, minTicks: number): Promise<{ pid: number; startTicks: number; cmd: string }[]>;
  /** This process, recorded so teardown can stop a foreground supervisor and nothing else; the boot it runs in. */
  self: { pid: number; startTicks: number | null; bootId?: string | null; pidNamespace?: string | null };
  /** Who holds a file lock (a Hugging Face download lock a worker waits for). */
  lockHolders(path: string): Promise<{ pid: number; cmd: string | null }[]>;
  /** The model's download locks some process holds now (host/hf/hf-cache.ts heldModelLocks). */
  heldModelLocks(model: string, env: Readonly<Record<string, string | undefined>>): Promise<{ path: string; holders: { pid: number; cmd: string | null }[] }[]>;
  /** Who asked this run to stop (teardown's note), or null. */
  stopRequest(stateDir: string, runId: string): string | null;
  /** `dynamo-dev restart`'s pending requests, each claimed once (restart-request.ts). */
  restartRequests(stateDir: string, runId: string): RestartRequest[];
  /** A restart's progress, for the command that asked. */
  restartEvent(stateDir: string, runId: string, reqId: string, e: RestartEvent): void;
  /** Appends a line to a log (on a line of its own); the log's size after (where what comes next starts). */
  appendLog(path: string, line: string): number;
  /** Bytes free on the filesystem holding `path` (null: it does not say). */
  freeBytes(path: string): number | null;
  /** Whether a socket listening on the port belongs to these pids ('ours'), to others only, or to nobody here (host/net/ports.ts). */
  portListenedBy(port: number, pids: readonly number[]): Promise<'ours' | 'other' | 'none'>;
}

export function realSupervisorDeps(): SupervisorDeps {
  return {
    clock: realClock,
    spawn: spawnLogged,
    follow: followFile,
    get: getJson,
    post: postJson,
    diagnose: diagnoseLog,
    descendants,
    stop: (targets, opts) => startStop(targets, opts),
    writeRun: writeRunSync,
    mkdirs: (dir) => void mkdirSync(dir, { recursive: true }),
    marked: async (marker, minTicks) => (await markedProcesses(marker, minTicks)).map((s) => ({ pid: s.pid, startTicks: s.startTicks, cmd: readCmdline(s.pid) })),
    self: { pid: process.pid, startTicks: readStartTicks(process.pid), bootId: readBootId(), pidNamespace: readPidNamespace('self') },
    lockHolders: (path) => import('../host/hf/hf-cache.js').then((m) => m.lockHolders(path)),
    heldModelLocks: (model, env) => import('../host/hf/hf-cache.js').then((m) => m.heldModelLocks(model, env)),
    stopRequest: readStopRequest,
    restartRequests: takeRestartRequests,
    restartEvent: appendRestartEvent,
    appendLog: appendLine,
    freeBytes,
    portListenedBy: (port, pids) => import('../host/net/ports.js').then((m) => m.portListenedBy(port, pids)),
  };
}

/** Appends `line` on a line of its own (after a newline when the file ends mid-line); the size after. */
function appendLine(path: string, line: string): number {
  let lastByte = 0x0a;
  try {
    // Without blocking or following a link: a FIFO put where the log was must not hold the supervisor.
    const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOFOLLOW);
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return 0;
      const size = st.size;
      if (size > 0) {
        const b = Buffer.alloc(1);
        readSync(fd, b, 0, 1, size - 1);
        lastByte = b[0];
      }
    } finally {
      closeSync(fd);
    }
  } catch {
    // no log yet: the line starts it
  }
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NONBLOCK | fsConstants.O_NOFOLLOW, 0o666);
  } catch {
    return 0; // a FIFO nobody reads, a link: not a log we write into
  }
  try {
    if (!fstatSync(fd).isFile()) return 0;
    writeSync(fd, `${lastByte === 0x0a ? '' : '\n'}${line}\n`);
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}
