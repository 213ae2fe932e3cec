import type { RunRecord } from './types.js';

// run.json writes for a live run: coalesced (a burst of state changes is one write) and ordered
// (a later state never loses to an earlier write); events never wait on the disk. Each write is
// synchronous once it runs, so no write is ever in flight while another starts: writeNow() (after
// a spawn, before anyone hears of it) can never be overtaken by an older snapshot.

export class RunWriter {
  private writing: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(
    private readonly record: RunRecord,
    /** Writes the whole record at once (state.ts writeRunSync: atomic rename). */
    private readonly write: (rec: RunRecord) => void,
    private readonly warn: (message: string) => void,
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
      this.warn(`cannot write run.json: ${(err as Error).message}`);
    }
  }

  /** Persists and waits until everything scheduled is on disk. */
  async flush(): Promise<void> {
    this.persist();
    await this.writing;
  }
}
