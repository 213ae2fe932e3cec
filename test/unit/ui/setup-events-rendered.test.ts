import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { SetupEvent } from '../../../src/run/setup-events.js';
import { setupNdjson } from '../../../src/ui/setup-ndjson.js';
import { setupText } from '../../../src/ui/setup-text.js';

// setup's events (run/setup.ts) as text and as NDJSON, for the branches no e2e reaches: AIPerf's
// folder busy (another setup installs it, or an earlier setup's installer still runs), a Python that
// cannot run AIPerf, and an install that fails after Dynamo is set up. The words are the ones setup
// printed before its service moved out of commands/setup.ts (issue 30).

function render(events: SetupEvent[], columns = Infinity): { stdout: string; stderr: string; json: Record<string, unknown>[] } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += String(d)));
  stderr.on('data', (d) => (err += String(d)));
  const say = setupText({ stdout, stderr, interactive: false, columns });
  for (const e of events) say(e);
  return { stdout: out, stderr: err, json: events.flatMap(setupNdjson) };
}

const dir = '/home/u/.cache/dynamo-dev/envs/aiperf-0.13.0';

describe('setup renders AIPerf\'s rare branches as it did', () => {
  it('AIPerf\'s folder held by another setup: one line, and no NDJSON line (setup still succeeds)', () => {
    const r = render([{ event: 'aiperf-busy', dir, heldBy: 4242, installerLeft: null }]);
    expect(r.stdout).toBe(`  aiperf  another dynamo-dev setup (pid 4242) is installing AIPerf in ${dir}\n`);
    expect(r.stderr).toBe('');
    expect(r.json).toEqual([]);
  });

  it('an earlier setup\'s installer still writing there: the command that stops it, whole', () => {
    const r = render([{ event: 'aiperf-busy', dir, heldBy: null, installerLeft: 777 }]);
    expect(r.stdout).toBe(`  aiperf  an earlier setup's installer (pid 777) still runs in ${dir}; stop it (kill -- -777) and run setup again\n`);
  });

  it('a Python AIPerf cannot run on: said on stdout; --json: an aiperf event with ok false and the cause only', () => {
    const cause = 'AIPerf (for bench) needs Python 3.11-3.13; /usr/bin/python3.10 is 3.10.12: not installed';
    const r = render([{ event: 'aiperf', ok: false, cause }]);
    expect(r.stdout).toBe(`  aiperf  ${cause}\n`);
    expect(r.stderr).toBe('');
    expect(r.json).toEqual([{ event: 'aiperf', ok: false, cause }]);
  });

  it('a failed AIPerf install: the cause, its log and tail on stderr; --json carries them', () => {
    const e: SetupEvent = { event: 'aiperf', ok: false, cause: '"install aiperf==0.13.0" failed (exit code 1)', tail: ['ERROR: No matching distribution found for aiperf==0.13.0'], log: `${dir}/setup.log` };
    const r = render([e]);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`dynamo-dev: AIPerf was not installed: "install aiperf==0.13.0" failed (exit code 1) (log: ${dir}/setup.log); Dynamo is set up, bench needs AIPerf\n  ERROR: No matching distribution found for aiperf==0.13.0\n`);
    expect(r.json).toEqual([e]);
  });

  it('--dry-run with a Python AIPerf cannot run on: the plan ends with why AIPerf would not be installed', () => {
    const python = { path: '/usr/bin/python3.10', version: '3.10.12' };
    const r = render([{
      event: 'plan', release: '1.6.1', engine: 'mocker', dir: '/e', installer: 'pip', python, uv: null, existing: null,
      steps: [{ id: 'venv', label: 'create the virtual environment', argv: ['/usr/bin/python3.10', '-m', 'venv', '/e'], command: '/usr/bin/python3.10 -m venv /e' }],
      fallback: null, aiperf: { state: 'python-too-old', python }, durationMs: 5,
    }]);
    expect(r.stdout.split('\n')).toEqual([
      'dry run: nothing installed. setup would build /e from Python 3.10.12 (/usr/bin/python3.10) with venv + pip (uv is not on PATH):',
      '  1. create the virtual environment',
      '     /usr/bin/python3.10 -m venv /e',
      '  AIPerf (for bench) needs Python 3.11-3.13; /usr/bin/python3.10 is 3.10.12: not installed',
      '',
    ]);
    // --json: the plan (what AIPerf would do is not part of it) and the dry run's result.
    expect(r.json.map((j) => j.event)).toEqual(['plan', 'result']);
    expect(r.json[0]).toEqual({ event: 'plan', dir: '/e', installer: 'pip', python, steps: [expect.objectContaining({ id: 'venv' })], fallback: null });
    expect(r.json[1]).toEqual({ event: 'result', ok: true, code: 0, dryRun: true, installed: false, release: '1.6.1', engine: 'mocker', dir: '/e', durationMs: 5 });
  });
});
