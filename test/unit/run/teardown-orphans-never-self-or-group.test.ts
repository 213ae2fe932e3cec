import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { teardown } from '../../../src/run/teardown.js';
import { listProcesses } from '../../../src/host/procs/processes.js';
import { readCmdline } from '../../../src/run/proc.js';
import type { ProcessInfo } from '../../../src/host/types.js';
import { tempHomes } from '../../helpers/cli.js';
import { isAlive, killStarted, track, waitUntil } from '../../helpers/proc-trees.js';

// teardown --orphans with the process list limited to what the test names: never the teardown
// process itself or the process that started it, even when they look like engines, and a leftover
// engine is stopped alone, never with the rest of its process group (a shell job that is not ours).

const home = tempHomes('dd-teardown-orphans-');
afterEach(() => killStarted());

describe('teardown --orphans', () => {
  it('the teardown process and its parent are never leftovers, even listed as engines', async () => {
    const { stateDir } = home();
    const uid = process.getuid!();
    // Start ticks that are not theirs: even a broken selection could never signal them.
    const us = (pid: number, ppid: number): ProcessInfo => ({ pid, ppid, uid, user: 'me', cmd: 'VLLM::EngineCore', name: 'VLLM::EngineCore', startTicks: 1, ageMs: 1000, pgid: pid });
    const out = await teardown({ stateDir, graceMs: 300, orphans: true, listProcesses: async () => [us(process.pid, process.ppid), us(process.ppid, 1)] });
    expect(out).toMatchObject({ orphans: 0, stopped: [], remaining: [] });
  });

  it('a leftover engine leading a group is stopped alone: another member of its group is left running', async () => {
    const { stateDir, dir } = home();
    const armed = join(dir, 'armed');
    // The engine leads its group; the member was started by a subshell that exited (not the engine's child).
    const child = spawn('bash', ['-c', `( sleep 3000 & echo $! > '${dir}/member' ); touch '${armed}'; exec -a VLLM::EngineCore sleep 3000`], { detached: true, stdio: 'ignore' });
    const engine = child.pid!;
    track(engine);
    child.unref();
    await waitUntil(() => existsSync(armed) && readCmdline(engine).startsWith('VLLM::EngineCore'), 'the engine to exec');
    const member = Number(readFileSync(join(dir, 'member'), 'utf8'));
    track(member);
    const out = await teardown({ stateDir, graceMs: 300, orphans: true, listProcesses: async () => (await listProcesses()).filter((p) => p.pid === engine) });
    expect(out.stopped.map((r) => [r.run, r.name, r.pid, r.signal])).toEqual([[null, 'VLLM::EngineCore', engine, 'SIGTERM']]);
    expect(isAlive(engine)).toBe(false);
    expect(isAlive(member)).toBe(true);
  });
});
