import type { FileFinding, Finding } from '../../../src/diagnose/types.js';
import type { LogSet } from '../../../src/doctor/types.js';

// Log sets written out by hand for the log checks' unit tests: what a scan of the run's logs
// found, without scanning files (the scanner has its own tests on real text).

export interface FileSpec {
  path: string;
  process?: string | null;
  role?: string | null;
  kvTokens?: number | null;
  findings?: FileFinding[];
  lines?: number;
}

/** A finding as the scanner reports it (first occurrence in `file` at `line`). */
export function finding(code: string, file: string, line: number, text: string, o: Partial<Finding> = {}): Finding {
  return { code, severity: 'warn', count: 1, file, line, text, explanation: `explains ${code}`, fix: `fix for ${code}`, ...o };
}

export function logSet(source: 'run' | 'paths', files: FileSpec[], findings: Finding[] = [], o: { label?: string; scanned?: number; partial?: { file: string; reason: string }[] } = {}): LogSet {
  return {
    source,
    label: o.label ?? (source === 'run' ? 'run 20261130-101500-agg-router' : files.map((f) => f.path).join(' ')),
    files: files.map((f) => ({ path: f.path, process: f.process ?? null, role: f.role ?? null })),
    scan: {
      files: o.scanned ?? files.length,
      bytes: 1000,
      findings,
      kvTokens: Object.fromEntries(files.map((f) => [f.path, f.kvTokens ?? null])),
      byFile: Object.fromEntries(files.map((f) => [f.path, f.findings ?? []])),
      lines: Object.fromEntries(files.map((f) => [f.path, f.lines ?? 10])),
      ...(o.partial ? { partial: o.partial } : {}),
    },
  };
}
