import { readdirSync, readlinkSync } from 'node:fs';
import { readBoundedSync } from '../host/files/bounded-read.js';
import { sleepSync } from './clock.js';
import { readStat } from './proc.js';
import { markerIn } from './run-scan.js';

// Whether a recorded pid is still one of the run's before anything signals it (house rule: start
// time AND run marker). A start time can be read off any process, so a record (forged, or copied
// from another machine state) could name a stranger with its real start time; the marker cannot:
// every process `up` starts inherits DYNAMO_DEV_RUN=<run dir> (run-scan.ts), fixed at exec in
// /proc/PID/environ.
//
// Not every process of a run shows it there:
// - vLLM's EngineCore and workers call setproctitle (vllm/utils/system_utils.py set_process_title),
//   which zeroes the whole argv+environ area: /proc/PID/environ then reads as NULs (checked with
//   setproctitle 1.3.8, the version ai-dynamo[vllm] installs). Such a descendant is judged by its
//   place (parent chain, process group) under a leader that carries the marker, never by its own
//   environment; alone (its leader gone) a wiped environment is accepted, an environment of other
//   variables is not.
// - A foreground `up` (the supervisor) was started by the user's shell: its environment has no
//   marker. It holds its run directory open for its whole life instead (start-run.ts), which
//   /proc/PID/fd shows; a detached supervisor carries the marker (detached.ts).
// An environment we cannot read (another user's process: EACCES) is not ours.

/** Environments are at most a few MiB (ARG_MAX); more is not a process we started. */
const MAX_ENVIRON_BYTES = 8 * 1024 * 1024;
/** Open descriptors looked at for the run directory (a supervisor holds a few dozen). */
const MAX_FDS = 4096;

/**
 * `empty`: nothing to read, not even NULs. The kernel shows no environment (and no command line)
 * from an exec's point of no return until the new program's stack is laid out, and only part of
 * one while it is: a wrapper that execs several times before its program runs (pyenv's python3
 * shim: /usr/bin/env, bash, pyenv, pyenv-exec, then python, each an exec) shows that in 36 of 40
 * starts polled here. Also a process that is exiting.
 */
export type EnvironVerdict = 'marked' | 'wiped' | 'empty' | 'unmarked';

/** Pure: what an environment block (null: unreadable) says of a run marker. */
export function environVerdict(environ: string | null, marker: string): EnvironVerdict {
  if (environ === null) return 'unmarked';
  if (environ === '') return 'empty';
  if (markerIn(environ) === marker) return 'marked';
  // setproctitle leaves NULs (or the title) where NAME=VALUE strings were.
  return environ.includes('=') ? 'unmarked' : 'wiped';
}

/** Pure: whether one of these open paths is the run directory or a file in it. */
export const holdsRunDir = (paths: readonly string[], marker: string): boolean =>
  paths.some((p) => p === marker || p.startsWith(`${marker}/`));

/** How a target proves it is the run's. */
export type ProofKind = 'leader' | 'supervisor' | 'engine';

/** Pure given what was read: leader: the marker; supervisor: the marker or the run dir open; engine: the marker or a wiped (or empty) environment. */
export function proves(kind: ProofKind, verdict: EnvironVerdict, openPaths: () => readonly string[], marker: string): boolean {
  if (verdict === 'marked') return true;
  if (kind === 'engine') return verdict === 'wiped' || verdict === 'empty';
  if (kind === 'supervisor') return holdsRunDir(openPaths(), marker);
  return false;
}

const NOT_OURS = ' is no longer ours (no run marker): left alone';
/** The note of a target left alone for want of the marker. */
export const notOursNote = (pid: number): string => `pid ${pid}${NOT_OURS}`;
/** Pure: the pid a stop's note says was left alone for want of the marker ([] for any other note). */
export function leftAlone(note: string | undefined): number[] {
  const m = note?.endsWith(NOT_OURS) ? /^pid (\d+)/.exec(note) : null;
  return m ? [Number(m[1])] : [];
}

/** /proc/PID/environ, read bounded and without blocking; null when gone or unreadable. */
export function readEnviron(pid: number): string | null {
  const r = readBoundedSync(`/proc/${pid}/environ`, { maxBytes: MAX_ENVIRON_BYTES });
  return r.ok ? r.text : null;
}

/** What /proc/PID/fd links to (at most MAX_FDS of them); [] when gone or unreadable. */
export function openPathsOf(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`).slice(0, MAX_FDS);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const fd of fds) {
    try {
      out.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** How often, and how long apart, an environment caught mid-exec is read again (the window is well under a millisecond when the machine is idle). */
export const PROOF_LOOKS = 25;
export const PROOF_LOOK_MS = 2;

/** The note of a target whose environment could not be read yet (not called a stranger: it is looked at again). */
export const notYetNote = (pid: number): string =>
  `pid ${pid} showed no environment to prove it the run's (an exec in progress, or exiting): not signalled yet; looked at again`;

export interface ProofLooks {
  read(pid: number): string | null;
  openPaths(pid: number): readonly string[];
  sleep(ms: number): void;
  /** The pid has ended (no entry, or a zombie). */
  gone(pid: number): boolean;
  looks: number;
}
const realLooks: ProofLooks = { read: readEnviron, openPaths: openPathsOf, sleep: sleepSync, gone: (pid) => readStat(pid) === null, looks: PROOF_LOOKS };

/**
 * Whether a live pid proves to be the run's (marker is the run's RUN_MARKER value): true, false,
 * 'unsure' when it still showed no environment at the last look, or 'gone' when it ended meanwhile
 * (an exiting process shows no environment either: one its supervisor is stopping as we look).
 * Anything short of proof is looked at again a few times first: an exec in progress shows no
 * environment, or the start of one (a read begun before the exec ends at it), for a moment; an
 * exiting one cannot be read (ESRCH) before it shows as a zombie; a stranger's stays as it is.
 */
export function proofOf(pid: number, marker: string, kind: ProofKind, l: ProofLooks = realLooks): boolean | 'unsure' | 'gone' {
  for (let look = 0; ; look++) {
    const environ = l.read(pid);
    // Unreadable: another user's, or one exiting (ESRCH while its stat still reads).
    const verdict = environ === null ? null : environVerdict(environ, marker);
    if (verdict !== null && proves(kind, verdict, () => l.openPaths(pid), marker)) return true;
    if ((verdict === null || verdict === 'empty') && l.gone(pid)) return 'gone';
    if (look >= l.looks) return verdict === 'empty' ? 'unsure' : false;
    l.sleep(PROOF_LOOK_MS);
  }
}

/** proofOf, answered yes or no ('unsure' is no). */
export function provesRun(pid: number, marker: string, kind: ProofKind): boolean {
  return proofOf(pid, marker, kind) === true;
}
