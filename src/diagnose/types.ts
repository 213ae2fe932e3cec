export type Severity = 'error' | 'warn' | 'info';

/** One known failure signature: data, not code (CLI.md "Finding codes"). */
export interface Signature {
  code: string;
  severity: Severity;
  /** Tested against each line after ANSI stripping; the first matching pattern counts. */
  patterns: RegExp[];
  /** Short human title, e.g. "CUDA Error 804 (forward compatibility)". */
  title: string;
  explanation: string;
  fix: string;
}

export interface Finding {
  code: string;
  severity: Severity;
  count: number;
  /** First occurrence. */
  file: string;
  line: number;
  text: string;
  explanation: string;
  fix: string;
}

/** What a scan of one or more files yields. */
export interface ScanResult {
  files: number;
  bytes: number;
  findings: Finding[];
  /** Per scanned file: the last `GPU KV cache size` value logged (null if none). */
  kvTokens: Record<string, number | null>;
  /**
   * Per scanned file: its own findings (same rules as `findings`, counted in that file only), so a
   * check can say why one worker never logged its KV size. Every scanned file has an entry.
   */
  byFile?: Record<string, FileFinding[]>;
  /**
   * Files only partly read: a truncated or corrupt .gz (rotation still compressing, a copy cut
   * short). The lines before the damage are scanned; one bad archive never hides the others.
   */
  partial?: { file: string; reason: string }[];
  /** Per scanned file: how many lines it has (the exit of a run's process quotes its last line). */
  lines?: Record<string, number>;
  /**
   * Per scanned file that has any: the Dynamo worker ids (the discovery instance id a frontend's
   * router names as `worker_id`) its process announced as its own, so a router diagnostic can be
   * put on the process that logged it.
   */
  workerIds?: Record<string, string[]>;
}

/** A finding within one file. */
export interface FileFinding {
  code: string;
  severity: Severity;
  count: number;
  line: number;
  text: string;
  /** The distinct `worker_id=N` fields of this finding's lines in the file (router diagnostics), when any. */
  workerIds?: string[];
}
