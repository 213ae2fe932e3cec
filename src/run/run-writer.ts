import { DiskFullError } from '../errors.js';
import type { RunRecord } from './types.js';

// run.json writes for a live run: coalesced (a burst of state changes is one write) and ordered
// (a later state never loses to an earlier write); events never wait on the disk. Each write is
// synchronous once it runs, so no write is ever in flight while another starts: writeNow() (after
// a spawn, before anyone hears of it) can never be overtaken by an older snapshot.

export class RunWriter {
  private writing: Promise<void> = Promise.resolve();
  private queued = false;
  /** A full disk was told once (onFull): later writes that fail the same way say nothing more. */
  private full = false;

  constructor(
    private readonly record: RunRecord,
    /** Writes the whole record at once (state.ts writeRunSync: atomic rename). */
    private readonly write: (rec: RunRecord) => void,
    private readonly warn: (message: string) => void,
    /** A full disk (ENOSPC, EDQUOT), told once: the run decides (before ready, nothing may run unrecorded). */
    private readonly onFull?: (err: DiskFullError) => void,
  ) {}

  /** Schedules a write of the record as it will be when the write starts. */
  persist(): void {
    if (this.queued) return;
    this.queued = true;
    this.writing = this.writing.then(() => {
      this.queued = false;
      this.writeNow();
    });
  }

  /** Writes the record now, synchronously (a SIGKILL right after cannot lose it). */
  writeNow(): void {
    this.record.updatedAt = new Date().toISOString();
    try {
      this.write(this.record);
    } catch (err) {
      if (err instanceof DiskFullError && this.onFull) {
        if (!this.full) this.onFull(err);
        this.full = true;
        return;
      }
      this.warn(`cannot write run.json: ${(err as Error).message}`);
    }
  }

  /** Persists and waits until everything scheduled is on disk. */
  async flush(): Promise<void> {
    this.persist();
    await this.writing;
  }
}
