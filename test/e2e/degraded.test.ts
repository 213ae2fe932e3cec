import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { waitUntil } from '../helpers/proc-trees.js';
import { records, survivors, upHarness } from '../helpers/up-run.js';
import { isSameProcess, readStartTicks } from '../../src/run/proc.js';

// The lie this tool exists to prevent: a detached agg-router run loses agg-1 after ready, and
// status, doctor and teardown must each say so (issue 8), against the fake workers and nvidia-smi.

const up = upHarness('dd-degraded-');
afterEach(() => up.cleanup());

interface Doc { ok: boolean; checks: { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: any }[] }
const byId = (doc: Doc) => Object.fromEntries(doc.checks.map((c) => [c.id, c]));

/** A detached agg-router run, ready; nvidia-smi lists each engine core with 3072 MiB. */
async function readyRun() {
  const s = await up.setup();
  const apps = join(s.dir, 'compute-apps.csv');
  s.env.FAKE_NVIDIA_SMI_APPS = apps;
  const r = await runCli(['up', 'agg-router', '--detach', '--no-preflight', '--json', ...s.sets], s.env, { timeoutMs: 25_000 });
  expect(r.code, r.stderr).toBe(0);
  const rec = records(s.stateDir)[0];
  const engineOf = (name: string) => rec.processes.find((p) => p.name === name)!.descendants.find((d) => d.cmd.includes('VLLM::EngineCore'))!;
  writeFileSync(apps, ['agg-0', 'agg-1'].map((n) => `${engineOf(n).pid}, VLLM::EngineCore, 3072`).join('\n'));
  return { s, rec, engineOf };
}

describe('a worker SIGKILLed after ready (the OOM killer), its engine left running', () => {
  it('status says degraded naming agg-1 and its engine\'s GPU memory; doctor exits 1 naming it and counts the engine as a leftover; teardown removes it', async () => {
    const { s, rec, engineOf } = await readyRun();
    const agg1 = rec.processes.find((p) => p.name === 'agg-1')!;
    const engine = engineOf('agg-1');
    process.kill(agg1.pid!, 'SIGKILL');
    await waitUntil(() => !isSameProcess(agg1.pid!, agg1.startTicks), 'agg-1 to die');
    expect(readStartTicks(engine.pid)).toBe(engine.startTicks); // the engine outlived its worker

    const st = await runCli(['status', '--json'], s.env);
    const run = JSON.parse(st.stdout).runs[0];
    expect(run.state).toBe('degraded');
    expect(run.lost).toHaveLength(1);
    expect(run.lost[0]).toMatchObject({ name: 'agg-1', leftPids: [engine.pid], gpuMiB: 3072 });
    expect(typeof run.lost[0].at).toBe('string');

    const human = await runCli(['status'], s.env);
    const first = human.stdout.split('\n')[0];
    expect(first).toContain('degraded: agg-1');
    expect(first).not.toMatch(/\bready\b/);
    expect(human.stdout).toContain(`still running: pid ${engine.pid}, holding 3,072 MiB of GPU memory`);

    const doc = await runCli(['doctor', '--json'], s.env, { timeoutMs: 30_000 });
    expect(doc.code, doc.stdout).toBe(1);
    const c = byId(JSON.parse(doc.stdout) as Doc);
    expect(c['kv.allocated'].status).toBe('fail');
    expect(c['kv.allocated'].summary).toContain('agg-1');
    // Other test files may have engines of their own running: find ours among the leftovers.
    expect(c['procs.leftover'].status).toBe('fail');
    const leftover = (c['procs.leftover'].evidence.processes as { pid: number; gpuMiB: number | null; leftBy?: string }[]).find((p) => p.pid === engine.pid);
    expect(leftover).toMatchObject({ gpuMiB: 3072 });
    expect(leftover!.leftBy).toContain(`agg-1 of run ${rec.id}`);
    expect(c['procs.leftover'].details.find((d) => d.startsWith(`pid ${engine.pid} `))).toContain(`left by agg-1 of run ${rec.id}`);
    // The live worker's engine is the run's own, not a leftover.
    expect(c['procs.leftover'].details.some((d) => d.startsWith(`pid ${engineOf('agg-0').pid} `))).toBe(false);
    expect(c['logs.errors'].status).toBe('fail');
    expect(c['logs.errors'].details.join('\n')).toContain('agg-1 is gone');

    const td = await runCli(['teardown', '--grace', '2'], s.env, { timeoutMs: 20_000 });
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(readStartTicks(engine.pid)).toBeNull();
    expect(survivors(s.stateDir, { supervisor: true })).toEqual([]);
  });
});
