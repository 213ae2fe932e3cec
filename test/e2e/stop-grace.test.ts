import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { runCli } from '../helpers/cli.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';

// dynamo.vllm 1.x waits DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS (default 5 s) after SIGTERM before
// it stops (dynamo/common/utils/graceful_shutdown.py); the fake worker does the same. A stop grace
// shorter than that would SIGKILL a healthy worker: plans set it to 0, so a short grace suffices.

const up = upHarness('dd-grace-');
afterEach(() => up.cleanup());

describe('stopping vLLM workers that honour the graceful-shutdown grace', () => {
  it('teardown --grace 2 of a ready agg-router run: every worker stops on SIGTERM within the grace, none SIGKILLed', async () => {
    const s = await up.setup();
    const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--json', ...s.sets], s.env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(0);
    const rec = records(s.stateDir)[0];
    const td = await runCli(['teardown', '--grace', '2', '--json'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    const doc = JSON.parse(td.stdout) as { stopped: { name: string; signal: string | null; ms: number }[]; remaining: unknown[] };
    expect(doc.remaining).toEqual([]);
    expect(doc.stopped.map((x) => x.name).sort()).toEqual(['agg-0', 'agg-1', 'frontend', 'supervisor']);
    // None needed SIGKILL. One the run's supervisor (signalled first) stopped before teardown reached
    // it is credited with the supervisor's SIGTERM (teardown-credits-supervisor.test.ts), never "no signal".
    for (const x of doc.stopped) expect([x.name, x.signal]).toEqual([x.name, 'SIGTERM']);
    expect(doc.stopped.find((x) => x.name === 'supervisor')?.signal).toBe('SIGTERM');
    for (const x of doc.stopped) expect(x.ms, x.name).toBeLessThan(2000);
    expect(survivors(s.stateDir)).toEqual([]);
    // The workers went through their shutdown with no grace to wait.
    for (const name of ['agg-0', 'agg-1']) {
      const log = readFileSync(rec.processes.find((p) => p.name === name)!.log, 'utf8');
      expect(log).toContain('Received shutdown signal, stopping worker');
      expect(log).not.toContain('Grace period');
    }
  });
});
