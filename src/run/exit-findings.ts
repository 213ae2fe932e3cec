import { resolve } from 'node:path';
import { endedBadly, exitFindings, mergeExitFindings, type LastLine } from './exits.js';
import { stripAnsi } from '../diagnose/line.js';
import type { ScanResult } from '../diagnose/types.js';
import type { LostProcess } from './losses.js';
import { tailFile } from './log-read.js';
import type { RunRecord } from './types.js';

/**
 * The scan of a run's logs plus one finding per process that ended badly (run/exits.ts). The
 * last line of a log is read only for a process whose log no signature explains (a few KiB from
 * its end); `only` limits it to the logs that were scanned (a single file named to diagnose).
 */
export async function addExitFindings(scan: ScanResult, record: RunRecord, o: { lost?: readonly LostProcess[]; only?: ReadonlySet<string> } = {}): Promise<ScanResult> {
  // The scan names files as the user wrote them (relative, say); run.json records absolute paths.
  const alias = new Map(Object.keys(scan.byFile ?? scan.kvTokens).map((k) => [resolve(k), k]));
  const only = o.only ? new Set([...o.only].map((f) => resolve(f))) : null;
  const rec: RunRecord = {
    ...record,
    processes: record.processes.filter((p) => !only || only.has(resolve(p.log))).map((p) => ({ ...p, log: alias.get(resolve(p.log)) ?? p.log })),
  };
  const procs = endedBadly(rec, o.lost);
  // Stryker disable next-line ConditionalExpression: equivalent, with no process mergeExitFindings returns the scan itself; this only skips building the tails map
  if (procs.length === 0) return scan;
  const tails = new Map<string, LastLine>();
  await Promise.all(procs.map(async (p) => {
    if ((scan.byFile?.[p.log] ?? []).some((f) => f.severity === 'error')) return;
    const lines: string[] = [];
    const read = await tailFile(p.log, 5, true, (batch) => {
      lines.push(...batch);
    }).catch(
      // Stryker disable next-line ArrowFunction: equivalent, a failed read leaves lines empty and nothing is quoted either way
      () => null,
    );
    // Stryker disable next-line ConditionalExpression: equivalent, no file (null) or a failed read leaves lines empty and nothing is quoted either way
    if (read === null) return;
    const total = scan.lines?.[p.log] ?? lines.length;
    for (let j = lines.length - 1; j >= 0; j--) {
      // Dynamo's Rust logs are coloured even into a file: the quote is text, never escape sequences.
      const text = stripAnsi(lines[j]).trim();
      if (text !== '') {
        tails.set(p.log, { line: total - (lines.length - 1 - j), text: text.length > 500 ? `${text.slice(0, 499)}…` : text });
        break;
      }
    }
  }));
  return mergeExitFindings(scan, exitFindings(rec, scan, { lost: o.lost, tails }));
}
