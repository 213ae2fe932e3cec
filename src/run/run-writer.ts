import type { RunRecord } from './types.js';

// run.json writes for a live run: coalesced (a burst of state changes is one write) and ordered
// (a later state never loses to an earlier write); events never wait on the disk.

export class RunWriter {
  private writing: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(
    private readonly record: RunRecord,
    /** Writes the whole record (state.ts writeRun: atomic rename). */
    private readonly write: (rec: RunRecord) => Promise<void>,
    private readonly warn: (message: string) => void,
  ) {}

  /** Schedules a write of the record as it will be when the write starts. */
  persist(): void {
    if (this.queued) return;
    this.queued = true;
    this.writing = this.writing.then(async () => {
      this.queued = false;
      this.record.updatedAt = new Date().toISOString();
      try {
        await this.write(this.record);
      } catch (err) {
        this.warn(`cannot write run.json: ${(err as Error).message}`);
      }
    });
  }

  /** Persists and waits until everything scheduled is on disk. */
  async flush(): Promise<void> {
    this.persist();
    await this.writing;
  }
}
