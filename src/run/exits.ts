import { formatClock } from '../format-duration.js';
import { describeEnd, lossKind, type LostProcess } from './losses.js';
import type { ProcessRecord, RunRecord } from './types.js';
import { chooseFix, planContext } from '../diagnose/choose-fix.js';
import { EXIT_SIGNATURE, signatureFor } from '../diagnose/signatures.js';
import type { FileFinding, Finding, ScanResult } from '../diagnose/types.js';

// A run's processes that ended badly, as findings: `diagnose` of a run whose process exited
// non-zero is never "0 errors", even when no signature matches a line of its log. Pure: the
// caller reads the last line of a log only for a process whose log explains nothing.

/** States in which a process ended on its own (or was found gone), never by our stop. */
const ENDED_BADLY = new Set(['failed', 'exited', 'gone']);

/** Pure: the processes of a run that ended badly: failed, exited, gone, or lost from a live run. */
export function endedBadly(rec: RunRecord, lost: readonly LostProcess[] = []): ProcessRecord[] {
  const lostNames = new Set(lost.map((x) => x.name));
  return rec.processes.filter((p) => ENDED_BADLY.has(p.state) || lostNames.has(p.name));
}

export interface LastLine {
  line: number;
  text: string;
}

const clock = (iso: string | null | undefined): string => (iso ? ` at ${formatClock(iso)}` : '');

/** "exited with code 1", "was killed by SIGKILL", "never started", "is gone (...)". */
function how(p: ProcessRecord): string {
  return describeEnd({ how: lossKind(p), exitCode: p.exitCode, signal: p.signal });
}

/**
 * Pure: one `run.process-exited` finding per process that ended badly, quoting the best line its
 * log has: the cause a signature found in it, else its last line (`tails`), else nothing.
 */
export function exitFindings(rec: RunRecord, scan: ScanResult, o: { lost?: readonly LostProcess[]; tails?: ReadonlyMap<string, LastLine> } = {}): Finding[] {
  return endedBadly(rec, o.lost).map((p): Finding => {
    const cause: FileFinding | undefined = (scan.byFile?.[p.log] ?? []).find((f) => f.severity === 'error');
    const tail = o.tails?.get(p.log);
    const ended = `${p.name} ${how(p)}${clock(p.endedAt ?? p.noticedGoneAt)}`;
    const quote = cause ? cause.text : tail ? tail.text : null;
    return {
      code: EXIT_SIGNATURE.code,
      severity: 'error',
      count: 1,
      file: p.log,
      line: cause?.line ?? tail?.line ?? 0,
      text: quote ? `${ended}: ${quote}` : ended,
      explanation: `${ended} (run ${rec.id}). ${
        cause ? `Its log's cause is ${cause.code} (reported on its own too).`
          : tail ? 'No known failure signature is in its log: the quoted line is its last.'
            : 'Its log is empty or missing: it ended before writing a line.'}`,
      fix: cause ? chooseFix(cause.code, cause.text, signatureFor(cause.code)?.fix ?? EXIT_SIGNATURE.fix, planContext(rec.plan)) : `read its log: \`dynamo-dev logs ${p.name} --run ${rec.id} --lines 80\`; check the machine with \`dynamo-dev doctor\``,
    };
  });
}

/**
 * Pure: the scan with the exit findings first in the report (they say what happened; the causes
 * follow), but after a file's own findings in byFile (a check explaining a file wants its cause).
 */
export function mergeExitFindings(scan: ScanResult, exits: Finding[]): ScanResult {
  // Stryker disable next-line ConditionalExpression: with no exits the merged scan has the same findings and byFile (a copy instead of the same object)
  if (exits.length === 0) return scan;
  const byFile = { ...(scan.byFile ?? {}) };
  for (const f of exits) {
    byFile[f.file] = [...(byFile[f.file] ?? []), { code: f.code, severity: f.severity, count: 1, line: f.line, text: f.text }];
  }
  return { ...scan, findings: [...exits, ...scan.findings], byFile };
}
