import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Supervisor } from '../../../src/run/supervisor.js';
import type { UpEvent } from '../../../src/run/events.js';
import type { Plan } from '../../../src/plan/types.js';
import { descendants, readStartTicks } from '../../../src/run/proc.js';
import { track, killStarted, waitUntil } from '../../helpers/proc-trees.js';
import { killHomeProcesses } from '../../helpers/home-processes.js';

const dirs: string[] = [];
afterEach(() => {
  killStarted();
  // What the supervisor started after a failed wait (tracked or not) carries the run's marker.
  for (const d of dirs.splice(0)) {
    killHomeProcesses(d);
    rmSync(d, { recursive: true, force: true });
  }
});

function planWith(runDir: string): Plan {
  return {
    recipe: 't', model: 'm', engine: 'vllm', gpu: { index: 0, totalMiB: null }, budget: { fractionSum: 0.3, limit: 0.9, budgetMiB: null },
    maxModelLen: 4096, router: { mode: 'round-robin', kvEvents: true }, disaggregated: false, frontendUrl: 'http://127.0.0.1:1', runDir,
    processes: [{
      name: 'agg-0', role: 'agg',
      // A worker stand-in with an engine child, that never gets ready.
      argv: ['bash', '-c', 'bash -c "exec -a VLLM::EngineCore sleep 300" & wait'],
      env: {}, ports: { system: 1 }, gpuMemoryUtilization: 0.3, waitFor: [],
      ready: { logPattern: 'GPU KV cache size: ([\\d,]+) tokens', http: 'http://127.0.0.1:1/health' },
      publishesKvEvents: false, kvTokensEstimate: null,
    }],
  };
}

describe('Supervisor last resort', () => {
  it('keeps supervising when a listener throws, and crash() stops every process it started', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'dd-sup-'));
    dirs.push(stateDir);
    const sup = new Supervisor({
      plan: planWith(join(stateDir, 'runs', 'r1')), runId: 'r1', stateDir, env: process.env,
      readyTimeoutMs: 60_000, graceMs: 2000, detach: false, handleSignals: false,
    });
    const events: UpEvent[] = [];
    const warnings: string[] = [];
    sup.on('event', (e: UpEvent) => {
      events.push(e);
      throw new Error('renderer is gone');
    });
    sup.on('warning', (w: string) => warnings.push(w));
    const running = sup.run();
    const started = await waitUntil(() => events.find((e) => e.event === 'starting'), 'the start event');
    const pid = (started as { pid: number }).pid;
    track(pid);
    const engine = await waitUntil(() => descendants(pid).find((d) => d.cmd.startsWith('VLLM::EngineCore')), 'the engine child');
    track(engine.pid);

    await sup.crash(new Error('boom'));
    const result = await running;
    expect(result).toMatchObject({ outcome: 'failed', code: 1, reason: 'unexpected error: boom' });
    expect(warnings.some((w) => w.includes('renderer is gone'))).toBe(true);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['starting', 'failed', 'stopped']));
    expect(readStartTicks(pid)).toBeNull();
    expect(readStartTicks(engine.pid)).toBeNull();
  });
});
