import { describe, expect, it } from 'vitest';
import { render } from 'ink-testing-library';
import { loadRecipe } from '../../../src/host/recipes.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { UpEvent } from '../../../src/run/events.js';
import { UpView } from '../../../src/ui/up-view.js';
import { initialState, reduce } from '../../../src/ui/up-state.js';
import { plainText } from '../../../src/ui/up-plain.js';

const plan = buildPlan({ recipe: await loadRecipe('agg-router'), runDir: '/s/runs/r1', gpuTotalMiB: 8188 });
const diagnosis = {
  code: 'cuda.error804', title: 'CUDA Error 804: forward-compatibility libraries on a GPU that cannot use them', severity: 'error' as const,
  explanation: 'The CUDA forward-compatibility libraries were loaded on a GPU that does not support forward compatibility.',
  fix: 'remove the compat directory from LD_LIBRARY_PATH', text: 'RuntimeError: ... Error 804: forward compatibility was attempted on non supported HW', file: '/s/runs/r1/logs/agg-1.log', line: 3,
};
const ready: UpEvent = {
  event: 'ready', runId: 'r1', url: 'http://127.0.0.1:8000', model: 'Qwen/Qwen3-0.6B', curl: 'curl -s http://127.0.0.1:8000/v1/chat/completions ...',
  workers: [
    { name: 'agg-0', role: 'agg', kvTokens: 14_816, gpuMemoryUtilization: 0.38, log: '/s/runs/r1/logs/agg-0.log', health: null },
    { name: 'agg-1', role: 'agg', kvTokens: 14_816, gpuMemoryUtilization: 0.38, log: '/s/runs/r1/logs/agg-1.log', health: null },
  ],
  logs: { frontend: '/s/runs/r1/logs/frontend.log', 'agg-0': '/s/runs/r1/logs/agg-0.log', 'agg-1': '/s/runs/r1/logs/agg-1.log' },
  ms: 1234, detached: false,
};

describe('up view state', () => {
  it('folds events into one row per process', () => {
    let s = initialState(plan, 0);
    s = reduce(s, { event: 'starting', process: 'agg-0', pid: 42, log: 'x', waitedFor: [] }, 10);
    s = reduce(s, { event: 'state', process: 'agg-0', state: 'loading', kvTokens: null, pid: 42 });
    s = reduce(s, { event: 'line', process: 'agg-0', text: 'Loading weights took 1.21 seconds' });
    s = reduce(s, { event: 'log-ready', process: 'agg-0', kvTokens: 14_816, ms: 800 });
    const row = s.rows.find((r) => r.name === 'agg-0')!;
    expect(row).toMatchObject({ state: 'loading', kvTokens: 14_816, pid: 42, since: 10, fraction: 0.38, lastLine: 'Loading weights took 1.21 seconds' });
    expect(s.rows.find((r) => r.name === 'agg-1')!.state).toBe('waiting');
  });
});

describe('UpView (ink)', () => {
  it('shows one row per process with state, KV tokens, fraction and the last log line, then the summary', async () => {
    let push: (e: UpEvent) => void = () => {};
    const app = render(<UpView plan={plan} runId="r1" columns={140} subscribe={(on) => { push = on; return () => {}; }} />);
    await new Promise((r) => setTimeout(r, 20));
    push({ event: 'state', process: 'agg-0', state: 'kv-allocated', kvTokens: 14_816, pid: 42 });
    push({ event: 'line', process: 'agg-0', text: 'GPU KV cache size: 14,816 tokens' });
    push({ event: 'state', process: 'agg-1', state: 'loading', kvTokens: null, pid: 43 });
    await new Promise((r) => setTimeout(r, 50));
    const frame = app.lastFrame()!;
    expect(frame).toMatch(/agg-0\s+KV allocated\s+\S+\s+KV 14,816\s+gpu 0.38\s+GPU KV cache size: 14,816 tokens/);
    expect(frame).toMatch(/agg-1\s+loading/);
    expect(frame).toMatch(/frontend\s+waiting/);
    push(ready);
    await new Promise((r) => setTimeout(r, 50));
    const done = app.lastFrame()!;
    expect(done).toContain('ready in 1.2 s');
    expect(done).toContain('url     http://127.0.0.1:8000');
    expect(done).toContain('curl -s http://127.0.0.1:8000/v1/chat/completions');
    expect(done).toContain('/s/runs/r1/logs/agg-1.log');
    app.unmount();
  });
});

describe('plain lines (no TTY)', () => {
  it('a step per line, the failure report on stderr with the diagnosis, last lines and log', () => {
    const seen = new Set<string>();
    expect(plainText({ event: 'starting', process: 'agg-1', pid: 43, log: 'x', waitedFor: ['agg-0'] }, seen).out)
      .toBe('starting agg-1 (pid 43) after agg-0 logged its KV cache size\n');
    expect(plainText({ event: 'log-ready', process: 'agg-0', kvTokens: 14_816, ms: 812 }, seen).out).toBe('agg-0: KV cache 14,816 tokens (0.8 s)\n');
    const ex = plainText({
      event: 'exited', process: 'agg-1', code: 1, signal: null, error: null, diagnosis, afterReady: false,
      lastLines: ['RuntimeError: Engine core initialization failed.'], log: '/s/runs/r1/logs/agg-1.log',
    }, seen).err!;
    expect(ex).toContain('✗ agg-1 exited with code 1 before it was ready');
    expect(ex).toContain('cause: CUDA Error 804');
    expect(ex).toContain('fix: remove the compat directory');
    expect(ex).toContain('│ RuntimeError: Engine core initialization failed.');
    expect(ex).toContain('log: /s/runs/r1/logs/agg-1.log');
    const failed = plainText({ event: 'failed', reason: 'agg-1 exited with code 1 before it was ready', process: 'agg-1', diagnosis, hint: null, lastLines: [], log: null }, seen).err!;
    // The diagnosis was already printed with the exit: not twice.
    expect(failed).toBe('✗ up failed: agg-1 exited with code 1 before it was ready\n');
    expect(plainText(ready, seen).out).toContain('agg-0     KV 14,816 tokens  gpu 0.38');
  });
});
