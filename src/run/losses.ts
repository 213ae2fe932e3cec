import type { ProcessLiveness, RunLiveness } from './liveness.js';
import type { EndDiagnosis, ProcessRecord, RunRecord } from './types.js';
import type { ProcessRole } from '../plan/types.js';
import { endedWords } from './ended.js';

// What a live run has lost: the planned processes that are not alive any more (exited, killed,
// never started, gone while nothing watched), how each ended and when, and what of each still
// lives (an engine core that outlived its worker keeps its GPU memory). Pure: status, doctor,
// teardown and diagnose all judge a run through this one function (DESIGN.md "one truth").

export type LossKind = 'exited' | 'killed' | 'gone' | 'never-started';

export interface LostProcess {
  name: string;
  role: ProcessRole;
  how: LossKind;
  exitCode: number | null;
  signal: string | null;
  /** When it ended (its supervisor saw it), else when a command first found it gone; null: unknown. */
  at: string | null;
  /** `at` is when it was noticed, not when it ended (nothing watched it). */
  noticed: boolean;
  /** Live pids that are still of it: an engine core (VLLM::EngineCore) that outlived its worker. */
  leftPids: number[];
  /** Its log's diagnosis when it ended, as recorded. */
  diagnosis: EndDiagnosis | null;
}

/** Pure: how a process that is not alive ended, from what its record says. */
export function lossKind(p: Pick<ProcessRecord, 'pid' | 'exitCode' | 'signal'>): LossKind {
  if (p.pid === null) return 'never-started';
  if (p.signal) return 'killed';
  if (p.exitCode !== null && p.exitCode !== undefined) return 'exited';
  return 'gone';
}

/** Pure: "exited with code 1", "was killed by SIGKILL", "is gone (exit unknown)", "never started". */
export function describeEnd(p: Pick<LostProcess, 'how' | 'exitCode' | 'signal'>): string {
  switch (p.how) {
    case 'killed':
    case 'exited': return endedWords({ code: p.exitCode, signal: p.how === 'killed' ? p.signal : null });
    case 'never-started': return 'never started';
    default: return 'is gone (exit unknown)';
  }
}

/**
 * Pure: the planned processes a run has lost, given its liveness. A process still waiting for its
 * turn in a starting run is not lost; in a run that was ready every planned process must live. A run
 * its live supervisor is stopping loses nothing: its processes end because they are being stopped.
 */
export function lostProcesses(rec: RunRecord, l: Pick<RunLiveness, 'perProcess'> & Partial<Pick<RunLiveness, 'supervisor'>>): LostProcess[] {
  const wasReady = rec.state === 'ready' || rec.state === 'degraded';
  const out: LostProcess[] = [];
  if (l.supervisor === true && rec.state === 'stopping') return out;
  rec.processes.forEach((p, i) => {
    const pl: ProcessLiveness | undefined = l.perProcess[i];
    if (pl?.alive) return;
    if (p.pid === null && !wasReady) return;
    const how = lossKind(p);
    out.push({
      name: p.name,
      role: p.role,
      how,
      exitCode: p.exitCode,
      signal: p.signal,
      at: p.endedAt ?? p.noticedGoneAt ?? null,
      noticed: !p.endedAt && Boolean(p.noticedGoneAt),
      leftPids: pl?.pids ?? [],
      diagnosis: p.diagnosis ?? null,
    });
  });
  return out;
}

/**
 * Pure: the record with every lost process a supervisor never reported marked `gone` and dated now
 * (exit codes are only knowable to the parent; when it is not watching, "gone, noticed at" is the
 * truth we have). null when there is nothing new to record.
 */
export function noteGone(rec: RunRecord, lost: readonly LostProcess[], now: Date): RunRecord | null {
  const fresh = new Set(lost.filter((x) => x.how === 'gone' && x.at === null).map((x) => x.name));
  if (fresh.size === 0) return null;
  const at = now.toISOString();
  return {
    ...rec,
    updatedAt: at,
    state: rec.state === 'ready' ? 'degraded' : rec.state,
    processes: rec.processes.map((p) => (fresh.has(p.name) ? { ...p, state: 'gone', noticedGoneAt: at } : p)),
  };
}
