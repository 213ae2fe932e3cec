import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { deadPid, killStarted, track, waitUntil } from '../../helpers/proc-trees.js';
import { descendants, readStat, scanAround } from '../../../src/run/proc.js';

afterEach(() => killStarted());

// scanAround(): what the stop loop reads each tick instead of all of /proc.
describe('scanAround', () => {
  it('reads the given live pids and their descendants (grandchildren too) and nothing else; gone pids are left out', async () => {
    const child = spawn('bash', ['-c', '(bash -c "(exec -a VLLM::EngineCore sleep 3000) & wait") & wait'], { detached: true, stdio: 'ignore' });
    track(child.pid!);
    const tree = await waitUntil(() => {
      const d = descendants(child.pid!);
      return d.some((x) => x.cmd.startsWith('VLLM::EngineCore')) ? d : null;
    }, 'engine grandchild');
    const got = scanAround([child.pid!, deadPid()])!;
    expect(got.map((s) => s.pid).sort((a, b) => a - b)).toEqual([child.pid!, ...tree.map((d) => d.pid)].sort((a, b) => a - b));
    expect(got.find((s) => s.pid === child.pid)).toEqual(readStat(child.pid!));
    expect(got.some((s) => s.pid === process.pid)).toBe(false);
    expect(scanAround([])).toEqual([]);
  });
});
