import { lockWaitFailure } from './policy/failure.js';
import type { LockWait } from './policy/readiness.js';
import type { ProcessLifecycle } from './process-lifecycle.js';
import type { RunCore } from './run-core.js';

// A worker that waits on a Hugging Face download lock, said or silent: the failure policy decides
// whether the run fails on it (policy/failure.ts lockWaitFailure); otherwise its row says whose
// lock it waits for. The silent wait is looked for on a timer while workers come up
// (process-lifecycle.ts findSilentLockWait).

export class LockWaits {
  private probing = false;

  constructor(private readonly run: RunCore, private readonly silentMs: number) {}

  /** Its log said it waits (huggingface_hub's line). */
  said(p: ProcessLifecycle, w: LockWait): void {
    // A restart is judged by its own deadline; it never stops the run.
    const fe = this.run.frontend();
    const f = p.restart ? null : lockWaitFailure(p.failureView(fe), w.lockPath, this.run.procs.map((q) => q.failureView(fe)), this.run.o.plan.model);
    if (f) void this.run.fail(f);
    else void p.lockHint(w, () => this.runPidsNow());
  }

  /** Workers coming up silent while a lock of the model is held elsewhere are waiting on it. */
  async probe(): Promise<void> {
    const run = this.run;
    if (this.probing || run.finishing) return;
    const now = run.d.clock.now();
    const silent = run.procs.filter((p) => p.silentSince(now, this.silentMs));
    if (silent.length === 0) return;
    this.probing = true;
    try {
      for (const p of silent) {
        const w = await p.findSilentLockWait();
        if (run.finishing) return;
        if (w) void p.lockHint(w, () => this.runPidsNow());
      }
    } finally {
      this.probing = false;
    }
  }

  /**
   * The live pids of the run's running processes: each one we spawned and its descendants now.
   * A process started through a wrapper that stays (uv run, `sh -c '. venv/bin/activate && python
   * ...'`) is the wrapper's pid in the record, while the program doing the work (holding a download
   * lock) is its child; the recorded descendants lag (refreshed every few seconds).
   */
  private runPidsNow(): Set<number> {
    return new Set(this.run.procs.flatMap((q) => q.livePids()));
  }
}
