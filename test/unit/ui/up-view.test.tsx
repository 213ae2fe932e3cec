import { beforeEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/plan/types.js';
import { render } from 'ink-testing-library';
import { loadRecipe } from '../../../src/host/files/recipes.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { UpEvent } from '../../../src/run/events.js';
import { UpView } from '../../../src/ui/up-view.js';
import { STALL_MS, initialState, reduce, rowHint } from '../../../src/ui/up-state.js';
import { newMemory, plainText } from '../../../src/ui/up-plain.js';
import { formatFailureReport, formatStopped } from '../../../src/ui/up-report.js';

// Built before each test, not at module load: mutation testing counts code run at load as "static" and reruns every test for each such mutant.
let plan: Plan;
beforeEach(async () => {
  plan = buildPlan({ recipe: await loadRecipe('agg-router'), runDir: '/s/runs/r1', gpuTotalMiB: 8188 });
});
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
const tick = () => new Promise((r) => setTimeout(r, 60));

/** The history of a run whose three processes started (pids 1, 2, 3). */
const startedHistory = (): UpEvent[] => [
  { event: 'run', runId: 'r1', logsDir: '/l' },
  { event: 'starting', process: 'frontend', pid: 1, log: 'x', waitedFor: [] },
  { event: 'starting', process: 'agg-0', pid: 2, log: 'x', waitedFor: [] },
  { event: 'starting', process: 'agg-1', pid: 3, log: 'x', waitedFor: [] },
];

/** The view in stop mode after the user stopped all three; `push` feeds it the stop's progress. */
function stoppingView() {
  let push: (e: UpEvent) => void = () => {};
  const history: UpEvent[] = [
    ...startedHistory(),
    { event: 'stopping', reason: 'user', by: null, killAt: Date.now() + 10_000, targets: [{ name: 'frontend', pid: 1 }, { name: 'agg-0', pid: 2 }, { name: 'agg-1', pid: 3 }] },
  ];
  const app = render(<UpView plan={plan} columns={80} history={history} mode="stop" subscribe={(on) => { push = on; return () => {}; }} />);
  return { app, push: (e: UpEvent) => push(e) };
}

describe('up view state', () => {
  it('folds events into one row per process; the row keeps the message, not the timestamp, level or engine prefix', () => {
    let s = initialState(plan, 0);
    s = reduce(s, { event: 'starting', process: 'agg-0', pid: 42, log: 'x', waitedFor: [] }, 10);
    s = reduce(s, { event: 'state', process: 'agg-0', state: 'loading', kvTokens: null, pid: 42 });
    s = reduce(s, { event: 'line', process: 'agg-0', text: '(EngineCore pid=48211) INFO 10-07 05:12:16 [default_loader.py:267] Loading weights took 1.21 seconds' });
    s = reduce(s, { event: 'log-ready', process: 'agg-0', kvTokens: 14_816, ms: 800 });
    const row = s.rows.find((r) => r.name === 'agg-0')!;
    expect(row).toMatchObject({ state: 'loading', kvTokens: 14_816, pid: 42, since: 10, fraction: 0.38, lastLine: 'Loading weights took 1.21 seconds' });
    expect(s.rows.find((r) => r.name === 'agg-1')!.state).toBe('waiting');
  });

  it('a known warning turns the row into a hint; 60 s without output is a stall hint, 59 s is not', () => {
    let s = initialState(plan, 0);
    s = reduce(s, { event: 'starting', process: 'frontend', pid: 1, log: 'x', waitedFor: [] }, 0);
    s = reduce(s, { event: 'state', process: 'frontend', state: 'loading', kvTokens: null, pid: 1 });
    const f = () => s.rows.find((r) => r.name === 'frontend')!;
    expect(rowHint(f(), STALL_MS - 1000)).toBeNull();
    expect(rowHint(f(), STALL_MS)).toMatch(/^no log output for 1m00s/);
    s = reduce(s, {
      event: 'line', process: 'frontend',
      text: '2026-10-07T05:12:20.704420Z  WARN dynamo_llm::kv_router::indexer::recovery::source_health: KV-event publishing is disabled for a role that requires KV events diagnostic_code="kv_event_publisher_disabled"',
    }, 5000);
    expect(rowHint(f(), 5000)).toMatch(/publishes no KV events/);
    s = reduce(s, { event: 'hint', process: 'agg-1', code: 'hf.lock-wait', text: 'waiting for the Hugging Face download lock held by pid 4242' });
    expect(rowHint(s.rows.find((r) => r.name === 'agg-1')!, 0)).toContain('pid 4242');
  });
});

describe('UpView (ink)', () => {
  it('rows with state, elapsed, KV tokens, fraction and the last message, cut at a word to the width', async () => {
    let push: (e: UpEvent) => void = () => {};
    const history: UpEvent[] = [{ event: 'run', runId: 'r1', logsDir: '/s/runs/r1/logs' }];
    const app = render(<UpView plan={plan} columns={80} history={history} mode="start" subscribe={(on) => { push = on; return () => {}; }} />);
    await tick();
    push({ event: 'starting', process: 'agg-0', pid: 42, log: 'x', waitedFor: [] });
    push({ event: 'state', process: 'agg-0', state: 'kv-allocated', kvTokens: 14_816, pid: 42 });
    push({ event: 'line', process: 'agg-0', text: '(EngineCore pid=48211) INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens and some more words that cannot fit' });
    push({ event: 'state', process: 'agg-1', state: 'loading', kvTokens: null, pid: 43 });
    await tick();
    const frame = app.lastFrame()!;
    expect(frame).toMatch(/agg-0\s+KV allocated\s+\d+s\s+KV 14,816\s+0.38\s+GPU KV cache size: 14,816…/);
    expect(frame).not.toContain('INFO');
    expect(frame).not.toContain('EngineCore');
    expect(frame).toMatch(/agg-1\s+loading/);
    expect(frame).toMatch(/frontend\s+waiting/);
    for (const line of frame.split('\n')) {
      expect(line.length).toBeLessThanOrEqual(80);
      // cut after a whole word, never inside one
      if (line.endsWith('…')) expect(line).toMatch(/\w…$/);
    }
    app.unmount();
  });

  it('preflight: a spinner naming the checks still running, no process table', async () => {
    let push: (e: UpEvent) => void = () => {};
    const app = render(<UpView plan={plan} columns={80} history={[]} mode="start" subscribe={(on) => { push = on; return () => {}; }} />);
    push({ event: 'preflight-progress', pending: ['Python environment'], done: 5, total: 6 });
    await tick();
    expect(app.lastFrame()).toMatch(/preflight: Python environment \d+s \(5\/6 done\)/);
    expect(app.lastFrame()).not.toContain('agg-0');
    app.unmount();
  });

  it('stopping: finished processes print once, the rest count down to SIGKILL and say Ctrl-C forces it', async () => {
    const { app, push } = stoppingView();
    push({
      event: 'stop-progress', killInMs: 8_000, targets: [
        { name: 'frontend', pid: 1, phase: 'done', signal: 'SIGTERM', alive: [] },
        { name: 'agg-0', pid: 2, phase: 'done', signal: 'SIGTERM', alive: [] },
        { name: 'agg-1', pid: 3, phase: 'terminating', signal: 'SIGTERM', alive: [3, 4] },
      ],
    });
    await tick();
    const f = app.frames.join('\n');
    expect(f).toMatch(/✓ frontend\s+stopped \(SIGTERM\)/);
    expect(app.lastFrame()).toMatch(/agg-1\s+SIGTERM sent; SIGKILL in 8s/);
    expect(app.lastFrame()).toContain('press Ctrl-C again to SIGKILL now');
    app.unmount();
  });
});

describe('UpView stopping: finished rows in the order they finish', () => {
  it('agg-1 finishing before agg-0 prints each once, in finishing order', async () => {
    const { app, push } = stoppingView();
    const t = (name: string, pid: number, done: boolean) => (done
      ? { name, pid, phase: 'done' as const, signal: 'SIGTERM' as const, alive: [] }
      : { name, pid, phase: 'terminating' as const, signal: 'SIGTERM' as const, alive: [pid] });
    push({ event: 'stop-progress', killInMs: 9_000, targets: [t('frontend', 1, false), t('agg-0', 2, false), t('agg-1', 3, true)] });
    await tick();
    push({ event: 'stop-progress', killInMs: 8_000, targets: [t('frontend', 1, false), t('agg-0', 2, true), t('agg-1', 3, true)] });
    await tick();
    push({ event: 'stop-progress', killInMs: 7_000, targets: [t('frontend', 1, true), t('agg-0', 2, true), t('agg-1', 3, true)] });
    await tick();
    // ink-testing-library's frame holds everything <Static> printed so far above the live region:
    // each finished row once, in finishing order.
    const printed = app.lastFrame()!.split('\n').filter((l) => /stopped \(SIGTERM\)/.test(l)).map((l) => l.trim());
    expect(printed.map((l) => l.split(/\s+/)[1])).toEqual(['agg-1', 'agg-0', 'frontend']);
    expect(app.lastFrame()).not.toMatch(/SIGKILL in/);
    app.unmount();
  });

  it('a process that had already failed is not shown as a clean stop', async () => {
    const history: UpEvent[] = [
      ...startedHistory(),
      { event: 'state', process: 'agg-1', state: 'failed', kvTokens: null, pid: 3 },
      { event: 'stopping', reason: 'failure', by: null, killAt: Date.now() + 10_000, targets: [{ name: 'frontend', pid: 1 }, { name: 'agg-0', pid: 2 }, { name: 'agg-1', pid: 3 }] },
      {
        event: 'stop-progress', killInMs: 9_000, targets: [
          { name: 'frontend', pid: 1, phase: 'done', signal: 'SIGTERM', alive: [] },
          { name: 'agg-0', pid: 2, phase: 'done', signal: 'SIGTERM', alive: [] },
          { name: 'agg-1', pid: 3, phase: 'done', signal: null, alive: [] },
        ],
      },
    ];
    const app = render(<UpView plan={plan} columns={80} history={history} mode="stop" subscribe={() => () => {}} />);
    await tick();
    const f = app.lastFrame()!;
    expect(f).toMatch(/✗ agg-1\s+had already exited/);
    expect(f).not.toMatch(/✓ agg-1/);
    expect(f).toMatch(/✓ agg-0\s+stopped \(SIGTERM\)/);
    app.unmount();
  });

  it('the fold records the order: processes with nothing to stop first, then as they finish', () => {
    let s = initialState(plan, 0);
    s = reduce(s, { event: 'stopping', reason: 'user', by: null, killAt: 10_000, targets: [{ name: 'agg-0', pid: 2 }, { name: 'agg-1', pid: 3 }] });
    expect(s.finished).toEqual(['frontend']);
    s = reduce(s, { event: 'stop-progress', killInMs: 1, targets: [{ name: 'agg-1', pid: 3, phase: 'done', signal: 'SIGTERM', alive: [] }] });
    s = reduce(s, { event: 'stop-progress', killInMs: 1, targets: [{ name: 'agg-0', pid: 2, phase: 'done', signal: 'SIGKILL', alive: [] }, { name: 'agg-1', pid: 3, phase: 'done', signal: 'SIGTERM', alive: [] }] });
    expect(s.finished).toEqual(['frontend', 'agg-1', 'agg-0']);
  });
});

describe('reports (plain text, printed after the view)', () => {
  it('a known cause: 4 tail lines, log, cause, fix, and the ✗ up failed line last', () => {
    const lines = Array.from({ length: 15 }, (_, i) => `line ${i}`);
    const text = formatFailureReport(
      { event: 'failed', reason: 'agg-1 exited with code 1 before it was ready', process: 'agg-1', diagnosis, hint: null, lastLines: lines, log: '/s/runs/r1/logs/agg-1.log' },
      null, { columns: 80 },
    );
    const out = text.split('\n');
    expect(text.endsWith('\n')).toBe(true);
    expect(out.filter((l) => l.includes('│'))).toEqual(['  │ line 11', '  │ line 12', '  │ line 13', '  │ line 14']);
    expect(out.at(-2)).toBe('✗ up failed: agg-1 exited with code 1 before it was ready');
    expect(out.at(-3)).toBe('  fix: remove the compat directory from LD_LIBRARY_PATH');
    expect(text.indexOf('cause:')).toBeGreaterThan(text.indexOf('line 14'));
    expect(out.length).toBeLessThan(16);
  });

  it('a fix names the run\'s model instead of the MODEL placeholder', () => {
    const lock = { ...diagnosis, code: 'hf.lock-wait', fix: 'download the model once before starting workers (`hf download MODEL`)' };
    const text = formatFailureReport({ event: 'failed', reason: 'r', process: 'agg-1', diagnosis: lock, hint: null, lastLines: [], log: null }, null, { model: 'Qwen/Qwen3-0.6B' });
    expect(text).toContain('`hf download Qwen/Qwen3-0.6B`');
    expect(text).not.toContain('MODEL');
  });

  it('no known cause: more of the tail, and what to read next', () => {
    const text = formatFailureReport(
      { event: 'failed', reason: 'agg-1 exited with code 3', process: 'agg-1', diagnosis: null, hint: null, lastLines: Array.from({ length: 20 }, (_, i) => `l${i}`), log: '/l/agg-1.log' },
      null,
    );
    expect(text.split('\n').filter((l) => l.includes('│'))).toHaveLength(12);
    expect(text).toContain('fix: read the whole log: dynamo-dev logs agg-1');
    expect(text.trimEnd().split('\n').at(-1)).toBe('✗ up failed: agg-1 exited with code 3');
  });

  it('the stop line names who ignored SIGTERM and puts its log path alone on a line', () => {
    const text = formatStopped(
      { event: 'stopped', runId: 'r1', reason: 'user', stopped: [{ name: 'frontend', pid: 1, signal: 'SIGTERM', ms: 120 }, { name: 'agg-1', pid: 3, signal: 'SIGKILL', ms: 10_012 }], remaining: [] },
      { reason: 'teardown', by: 'pid 77', logs: { 'agg-1': '/s/runs/r1/logs/agg-1.log' } },
      { columns: 80, rowsShown: true },
    );
    expect(text).toBe([
      'stopped 2 processes by dynamo-dev teardown (pid 77) from another terminal in',
      '  10.0 s',
      '! agg-1 ignored SIGTERM and was killed with SIGKILL after 10.0 s; its log:',
      '  /s/runs/r1/logs/agg-1.log',
      '',
    ].join('\n'));
  });
});

describe('plain lines (no TTY)', () => {
  it('a step per line; a death says so at once, the full report comes after the stop line', () => {
    const m = newMemory(plan);
    expect(plainText({ event: 'starting', process: 'agg-1', pid: 43, log: '/l/agg-1.log', waitedFor: ['agg-0'] }, m).out)
      .toBe('starting agg-1 (pid 43) after agg-0 logged its KV cache size\n');
    expect(plainText({ event: 'log-ready', process: 'agg-0', kvTokens: 14_816, ms: 812 }, m).out).toBe('agg-0: KV cache 14,816 tokens (0.8 s)\n');
    const ex = plainText({
      event: 'exited', process: 'agg-1', code: 1, signal: null, error: null, diagnosis, afterReady: false,
      lastLines: ['RuntimeError: Engine core initialization failed.'], log: '/l/agg-1.log',
    }, m).err!;
    expect(ex).toBe('✗ agg-1 exited with code 1 before it was ready; stopping the others\n');
    // up --restart: the run goes on; the process is started again.
    expect(plainText({
      event: 'exited', process: 'agg-1', code: null, signal: 'SIGKILL', error: null, diagnosis: null, afterReady: true, lastLines: [], log: '/l/agg-1.log', restart: 'on-failure:2',
    }, newMemory(plan)).err).toBe('! agg-1 was killed by SIGKILL after the run was ready; starting it again (--restart on-failure:2)\n');
    expect(plainText({ event: 'failed', reason: 'agg-1 exited with code 1 before it was ready', process: 'agg-1', diagnosis, hint: null, lastLines: [], log: null }, m)).toEqual({});
    const end = plainText({ event: 'stopped', runId: 'r1', reason: 'failure', stopped: [{ name: 'agg-0', pid: 42, signal: 'SIGTERM', ms: 300 }], remaining: [] }, m).err!;
    expect(end.indexOf('stopped 1 process')).toBe(0);
    expect(end).toContain('│ RuntimeError: Engine core initialization failed.');
    expect(end).toContain('cause: CUDA Error 804');
    expect(end.trimEnd().split('\n').at(-1)).toBe('✗ up failed: agg-1 exited with code 1 before it was ready');
  });

  it('the ready summary: the curl command alone on its line, the GPU picture, the logs', () => {
    const m = newMemory(plan);
    const out = plainText(ready, m).out!;
    expect(out.split('\n')).toContain(ready.curl);
    expect(out).toMatch(/agg-0\s+0.38 = 3,111 MiB/);
    expect(out).toContain('/s/runs/r1/logs/agg-1.log');
    expect(out.trimEnd().split('\n').at(-1)).toBe('  supervising: Ctrl-C stops every process');
  });
});
