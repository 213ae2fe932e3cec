import { describe, expect, it } from 'vitest';
import chalk from 'chalk';
import { formatRunTable, formatStatus } from '../../../src/ui/status-table.js';
import { formatFailureReport, formatRunLine, formatStopped } from '../../../src/ui/up-report.js';
import { formatOutcome } from '../../../src/ui/doctor-report.js';
import { formatPlanText } from '../../../src/ui/plan-text.js';
import { buildPlan } from '../../../src/plan/build.js';
import { loadRecipe } from '../../../src/host/files/recipes.js';
import type { RunStatusDoc } from '../../../src/run/status-doc.js';

// A path or command a person copies from status, up (its run line, failure report, stop report),
// up --dry-run and doctor's fix is never cut mid-word by the terminal: on a terminal (`columns`)
// it goes whole on a line of its own (at column 0 when it is wider than the room under the
// gutter, so the terminal's soft-wrap continues it there and a line selection copies exactly it).
// Piped (no columns) every line is what it was, one line each.

chalk.level = 0;

const STATE = '/tmp/a-rather-long-folder-name/for-the-state-of-dynamo-dev-runs';
const ID = '20261202-035705-756-agg-router';
const LOGS = `${STATE}/runs/${ID}/logs`; // 94 columns: wider than 80, narrower than 120
const LOG = `${LOGS}/agg-1.log`;

/** Every line fits `width`, except a lone token at column 0 (a path or command wider than the terminal). */
function fits(lines: string[], width: number): void {
  for (const l of lines) if (/\s/.test(l) || l.startsWith(' ')) expect(l.length, `wider than ${width}: ${l}`).toBeLessThanOrEqual(width);
}
/** `token` is on one line, whole: alone, or between spaces. */
function whole(lines: string[], token: string): void {
  expect(lines.some((l) => l === token || l.split(/\s+/).includes(token)), `${token} not whole in:\n${lines.join('\n')}`).toBe(true);
}

const doc = (): RunStatusDoc => ({
  id: ID, recipe: 'agg-router', model: 'Qwen/Qwen3-0.6B', state: 'stopped', live: false, createdAt: '', updatedAt: '',
  frontendUrl: 'http://127.0.0.1:8000', detached: false, supervisor: { pid: 1, alive: false }, logsDir: LOGS,
  processes: [], unrecorded: [], lost: [], gpuChecked: false,
});

describe('status: the logs line and the empty state dir', () => {
  it.each([40, 80, 120])('at %i columns the logs path is whole on a line, nothing wider than the terminal', (w) => {
    const lines = formatRunTable(doc(), { columns: w, now: 0 }).trimEnd().split('\n');
    fits(lines, w);
    whole(lines, LOGS);
    const at = lines.findIndex((l) => l.startsWith('  logs:'));
    // It fits beside its label only at 120; else the label ends its line and the path follows alone at column 0.
    expect(lines.slice(at)).toEqual(w === 120 ? [`  logs: ${LOGS}`] : ['  logs:', LOGS]);
  });

  it('piped: one line, as before', () => {
    expect(formatRunTable(doc(), { now: 0 }).trimEnd().split('\n').at(-1)).toBe(`  logs: ${LOGS}`);
  });

  it.each([40, 80, 120])('no runs: the state dir whole at %i columns; piped, one line', (w) => {
    const text = formatStatus([], { stateDir: STATE, single: false, now: 0, columns: w });
    const lines = text.trimEnd().split('\n');
    fits(lines, w);
    whole(lines, STATE);
    // The command to start one stays whole.
    expect(lines.some((l) => l.trim() === 'dynamo-dev up [RECIPE]' || l.includes(' dynamo-dev up [RECIPE] ') || l.endsWith(' dynamo-dev up [RECIPE]'))).toBe(true);
    expect(formatStatus([], { stateDir: STATE, single: false, now: 0 })).toBe(`no runs recorded in ${STATE}\nstart one with: dynamo-dev up [RECIPE] (e.g. dynamo-dev up agg)\n`);
  });
});

describe('up: the run line, the failure report\'s log, the stop report', () => {
  const run = { event: 'run' as const, runId: ID, logsDir: LOGS };

  it.each([40, 80, 120])('the run line at %i columns: the logs path never cut', (w) => {
    const lines = formatRunLine(run, w).trimEnd().split('\n');
    fits(lines, w);
    whole(lines, LOGS);
    expect(lines[0]).toBe(w === 40 ? `run ${ID}  logs` : `run ${ID}  logs in`);
  });

  it('the run line piped: one line, as before', () => {
    expect(formatRunLine(run)).toBe(`run ${ID}  logs in ${LOGS}\n`);
  });

  const failed = { event: 'failed' as const, reason: 'agg-1 exited with code 3', process: 'agg-1', diagnosis: null, hint: null, lastLines: ['boom'], log: LOG };

  it.each([40, 80, 120])('the failure report at %i columns: its log path never cut', (w) => {
    const lines = formatFailureReport(failed, null, { columns: w }).trimEnd().split('\n');
    fits(lines.filter((l) => !l.includes('│')), w);
    whole(lines, LOG);
    // 114 columns of path: never beside its label here; under it at 120, alone at column 0 below that.
    expect(lines).toContain('  log:');
    expect(lines).toContain(w === 120 ? `    ${LOG}` : LOG);
    expect(lines).toContain(w === 40 ? '  fix: read the whole log:' : '  fix: read the whole log: dynamo-dev logs agg-1');
    expect(lines.some((l) => l.trim() === 'dynamo-dev logs agg-1' || l.endsWith(' dynamo-dev logs agg-1'))).toBe(true);
  });

  it('the failure report piped: as before, one line each', () => {
    expect(formatFailureReport(failed, null).split('\n')).toEqual([
      '  last lines of agg-1:', '  │ boom', `  log: ${LOG}`,
      "  cause: no known failure signature in agg-1's log; its last lines are above",
      '  fix: read the whole log: dynamo-dev logs agg-1', '✗ up failed: agg-1 exited with code 3', '',
    ]);
  });

  const stopped = {
    event: 'stopped' as const, runId: ID, reason: 'user' as const,
    stopped: [{ name: 'agg-1', pid: 3, signal: 'SIGKILL' as const, ms: 10_012 }],
    remaining: [{ name: 'agg-0', pid: 4, state: 'D', cmd: `python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --kv-events-config {"endpoint":"tcp://*:20080"}` }],
  };
  const ctx = { reason: 'user' as const, logs: { 'agg-1': LOG } };

  it.each([40, 80, 120])('the stop report at %i columns: the ignored-SIGTERM log and what still runs, nothing cut', (w) => {
    const lines = formatStopped(stopped, ctx, { columns: w }).trimEnd().split('\n');
    fits(lines, w);
    whole(lines, LOG);
    // The log path is wider than the room beside the 2-space indent at 40 and 80: alone at column 0.
    expect(lines).toContain(w === 120 ? `  ${LOG}` : LOG);
    whole(lines, '--kv-events-config');
    expect(lines.filter((l) => l.includes('ps -o pid,stat,args -p 4'))).toHaveLength(1);
    // The run keeps what SIGKILL could not end: teardown of that run tries again (--run and its id on one line).
    expect(lines.join(' ').replace(/\s+/g, ' ')).toContain(`fix: dynamo-dev teardown --run ${ID}`);
    expect(lines.some((l) => l.trim() === `--run ${ID}` || l.endsWith(`--run ${ID}`))).toBe(true);
  });

  it('the stop report piped: as before, one line each', () => {
    expect(formatStopped(stopped, ctx).split('\n')).toEqual([
      'stopped 1 process in 10.0 s: agg-1 SIGKILL 10.0 s',
      '! agg-1 ignored SIGTERM and was killed with SIGKILL after 10.0 s; its log:',
      `  ${LOG}`,
      `✗ still running: agg-0 pid 4 (state D) ${stopped.remaining[0].cmd}`,
      '  SIGKILL could not end it (state D = stuck in the kernel, e.g. a GPU driver call); check: ps -o pid,stat,args -p 4',
      `  fix: dynamo-dev teardown --run ${ID}`,
      '',
    ]);
  });
});

describe('up --dry-run: the command and env of each process', () => {
  it.each([80, 120])('at %i columns a command wider than the terminal goes whole at column 0 under its label', async (w) => {
    const plan = buildPlan({ recipe: await loadRecipe('agg-router'), runDir: `${STATE}/runs/r1`, gpuTotalMiB: 8188 });
    const piped = formatPlanText(plan).split('\n');
    const lines = formatPlanText(plan, w).split('\n');
    const runs = piped.filter((l) => l.startsWith('  run  '));
    expect(runs.length).toBe(plan.processes.length);
    for (const r of runs) {
      const command = r.slice('  run  '.length);
      if (r.length <= w) expect(lines).toContain(r);
      else {
        const at = lines.indexOf(command);
        expect(at, `${command} not alone on a line`).toBeGreaterThan(0);
        expect(lines[at - 1]).toBe('  run');
      }
    }
    // The worker's command (the KV events JSON) is wider than 120 too: at least one moved.
    expect(lines.filter((l) => l === '  run').length).toBeGreaterThan(0);
    // The readiness URLs (to curl) are whole, the plan's prose and its process table within the width.
    for (const url of piped.join(' ').match(/http:\/\/\S+/g)!) whole(lines, url);
    fits(lines.filter((l) => !runs.some((r) => r.endsWith(l)) && !/^\S+=/.test(l)), w);
    // Piped, nothing moved.
    expect(piped.filter((l) => l === '  run' || l === '  env')).toEqual([]);
  });
});

describe('doctor: a fix with an export keeps it whole with its value', () => {
  it.each([40, 80, 120])('at %i columns `export UCX_TLS=...` is never split after export', (w) => {
    const fix = 'unset UCX_TLS, or include cuda transports: export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp';
    const text = formatOutcome({ title: 'logs.errors', status: 'fail', summary: '1 error finding', details: [], fix }, 12, w);
    const lines = text.trimEnd().split('\n');
    // At 40 the command is wider than the terminal: alone at column 0, whole.
    fits(lines.filter((l) => l !== 'export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp'), w);
    expect(lines.some((l) => l.includes('export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp')), lines.join('\n')).toBe(true);
    expect(lines.some((l) => /export$/.test(l))).toBe(false);
  });

  it('piped: the fix on one line', () => {
    const fix = 'unset UCX_TLS: export UCX_TLS=tcp';
    expect(formatOutcome({ title: 't', status: 'fail', summary: 's', details: [], fix }, 1)).toBe('✗ t  s\n    fix: unset UCX_TLS: export UCX_TLS=tcp\n');
  });
});
