import type { FixContext } from '../diagnose/choose-fix.js';
import type { Finding } from '../diagnose/types.js';

// The crash report's "why": the findings of the process's own log (the signature table), the root
// cause first.

export interface Diagnosis {
  code: string;
  /** Short human title from the signature table. */
  title: string;
  severity: Finding['severity'];
  explanation: string;
  fix: string;
  /** The matched line and where it is. */
  text: string;
  file: string;
  line: number;
}

/** Findings that follow from another one (the engine failed *because of* the 804), ranked last. */
const CONSEQUENCES = new Set(['vllm.engine-failed', 'vllm.engine-dead', 'ucx.unreachable']);
/** The generic causes (a Rust panic, an uncaught exception, a bare ERROR line): only when nothing specific is known. */
const GENERIC = new Set(['rust.panic', 'python.exception', 'log.error']);
const RANK = { error: 0, warn: 1, info: 2 } as const;
const kind = (code: string) => (CONSEQUENCES.has(code) ? 2 : GENERIC.has(code) ? 1 : 0);

/** Problems only (no info findings), root cause first: severity, specific before generic before consequences, earliest line. Pure. */
export function rankFindings(findings: Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .filter(({ f }) => f.severity !== 'info')
    .sort((a, b) =>
      RANK[a.f.severity] - RANK[b.f.severity]
      || kind(a.f.code) - kind(b.f.code)
      || a.f.line - b.f.line
      // (the directive below sits after `||` so that it leads the operand: Stryker ignores a comment attached to no node)
      || // Stryker disable next-line ArithmeticOperator: equivalent, Array.prototype.sort is stable, so the index tie-break never decides an order
        a.i - b.i)
    .map(({ f }) => f);
}

export const toDiagnosis = (f: Finding, title?: string): Diagnosis => ({
  code: f.code, title: title ?? f.code, severity: f.severity, explanation: f.explanation, fix: f.fix, text: f.text, file: f.file, line: f.line,
});

/** Scans one log with the signature table; null when nothing known matched or the scan failed. */
export async function diagnoseLog(path: string, ctx: FixContext = {}): Promise<{ top: Diagnosis | null; all: Diagnosis[] }> {
  try {
    const [{ scanPaths }, { signatureFor }, { chooseFix }] = await Promise.all([
      import('../host/logs/log-scan.js'), import('../diagnose/signatures.js'), import('../diagnose/choose-fix.js'),
    ]);
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, without missingOk a missing log throws and the catch below returns the same empty diagnosis
    const scan = await scanPaths([path], { missingOk: true, skipOdd: true });
    // The fix chosen for the run the log belongs to (its plan: recipe settings, workers sharing the GPU).
    const ranked = rankFindings(scan.findings).map((f) => {
      const sig = signatureFor(f.code);
      return toDiagnosis(sig ? { ...f, fix: chooseFix(f.code, f.text, sig.fix, ctx) } : f, sig?.title);
    });
    return { top: ranked[0] ?? null, all: ranked };
  } catch {
    // A scan that fails (log unreadable) only costs the diagnosis; the last lines still show.
    return { top: null, all: [] };
  }
}
