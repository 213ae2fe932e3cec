import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { unreadableLine, unreadableRuns } from '../../../src/run/unreadable-runs.js';
import { listRuns, onRecordWarning } from '../../../src/run/state.js';
import { RUN_MARKER, markerFor } from '../../../src/run/run-scan.js';
import { tempHomes } from '../../helpers/cli.js';

// run/unreadable-runs.ts: a run whose run.json cannot be read may still be live (its processes
// carry its marker); status and teardown then name the record and the pids instead of "no run".

const home = tempHomes('dd-unreadable-runs-');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A process of the run as `up` starts them: it inherits the run's marker. */
async function marked(marker: string): Promise<number> {
  const env = { ...process.env, [RUN_MARKER]: marker };
  const child = spawn(process.execPath, ['-e', "setInterval(() => {}, 1000); process.stdout.write('up\\n');"], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve) => createInterface({ input: child.stdout! }).once('line', () => resolve()));
  return child.pid!;
}

function broken(stateDir: string, id: string, text: string): string {
  mkdirSync(join(stateDir, 'runs', id), { recursive: true });
  const path = join(stateDir, 'runs', id, 'run.json');
  writeFileSync(path, text);
  return path;
}

describe('unreadableRuns: records that cannot be read but hide something live', () => {
  it('names the record, why, and every live process carrying its marker; one with nothing live is left to the warning', async () => {
    const { stateDir } = home();
    const livePath = broken(stateDir, '20261207-200000-000-agg', '{"id": "20261207-200000-000-agg", "sta');
    broken(stateDir, '20261207-190000-000-agg', 'not json');
    const pids = [await marked(markerFor(stateDir, '20261207-200000-000-agg')), await marked(markerFor(stateDir, '20261207-200000-000-agg'))];
    const warnings: string[] = [];
    onRecordWarning((w) => warnings.push(w));
    expect(await listRuns(stateDir)).toEqual([]);
    expect(warnings).toHaveLength(2);
    const found = await unreadableRuns(stateDir);
    expect(found).toEqual([{ id: '20261207-200000-000-agg', path: livePath, reason: expect.stringMatching(/^not JSON/), pids: expect.arrayContaining(pids) }]);
    expect(found[0].pids).toHaveLength(2);
    // Another state dir's unreadable records are not this one's.
    expect(await unreadableRuns(home().stateDir)).toEqual([]);
  });
});

describe('unreadableLine', () => {
  const u = { id: 'r1', path: '/s/runs/r1/run.json', reason: 'not JSON' };
  it('one process, several (with the command that stops them), after a stop (without it), none', () => {
    expect(unreadableLine({ ...u, pids: [41] })).toBe('run r1: its record /s/runs/r1/run.json cannot be read (not JSON); 1 live process carries its run marker (pid 41): stop them with dynamo-dev teardown');
    expect(unreadableLine({ ...u, pids: [41, 42] })).toBe('run r1: its record /s/runs/r1/run.json cannot be read (not JSON); 2 live processes carry its run marker (pid 41, 42): stop them with dynamo-dev teardown');
    expect(unreadableLine({ ...u, pids: [41, 42] }, true)).toBe('run r1: its record /s/runs/r1/run.json cannot be read (not JSON); 2 live processes carry its run marker (pid 41, 42)');
    expect(unreadableLine({ ...u, pids: [] })).toBe('run r1: its record /s/runs/r1/run.json cannot be read (not JSON); no live process carries its run marker');
  });
});
