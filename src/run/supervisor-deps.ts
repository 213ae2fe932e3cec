import { mkdirSync } from 'node:fs';
import { realClock, type Clock } from './clock.js';
import { diagnoseLog, type Diagnosis } from './diagnosis.js';
import { followFile, type FollowOptions, type Follower } from './follow.js';
import { getJson } from '../host/http.js';
import { descendants, readStartTicks } from './proc.js';
import type { HttpGetter } from './readiness.js';
import { spawnLogged, type Spawned } from './spawn.js';
import { writeRun } from './state.js';
import { startStop, type StopHandle, type StopOptions, type StopTarget } from './stop.js';
import type { DescendantRecord, RunRecord } from './types.js';

// Everything the supervisor does to the machine, in one place: the real implementations by
// default, fakes in tests (new Supervisor(options, { spawn: fakeSpawn, ... })).

export interface SupervisorDeps {
  clock: Clock;
  /** Starts a process in its own group, output appended to the log file. */
  spawn(argv: string[], env: NodeJS.ProcessEnv, logFile: string): Spawned;
  follow(path: string, onLine: (line: string) => void, opts: FollowOptions): Follower;
  get: HttpGetter;
  /** The log's root cause from the signature table. */
  diagnose(logFile: string): Promise<{ top: Diagnosis | null }>;
  /** Live descendants of pid (engine processes to record for teardown). */
  descendants(pid: number): DescendantRecord[];
  /** SIGTERM -> grace -> SIGKILL of the targets (stop.ts), escalatable. */
  stop(targets: StopTarget[], opts: StopOptions): StopHandle;
  writeRun(stateDir: string, rec: RunRecord): Promise<void>;
  mkdirs(dir: string): void;
  /** This process, recorded so teardown can stop a foreground supervisor and nothing else. */
  self: { pid: number; startTicks: number | null };
}

export function realSupervisorDeps(): SupervisorDeps {
  return {
    clock: realClock,
    spawn: spawnLogged,
    follow: followFile,
    get: getJson,
    diagnose: diagnoseLog,
    descendants,
    stop: (targets, opts) => startStop(targets, opts),
    writeRun,
    mkdirs: (dir) => void mkdirSync(dir, { recursive: true }),
    self: { pid: process.pid, startTicks: readStartTicks(process.pid) },
  };
}
