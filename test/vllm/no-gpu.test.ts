import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { runCli, SAMPLES, tempHome } from '../helpers/cli.js';
import { records, survivors } from '../helpers/runs.js';
import { killHomeProcesses } from '../helpers/home-processes.js';
import { portBlock, portSets } from '../dynamo/helpers.js';
import { stripAnsi } from '../../src/diagnose/line.js';
import { vllmPython } from './real.js';

// The real dynamo.vllm worker of 1.6.1 (vLLM 0.31.0) on a machine without a GPU, started by `up agg`
// as a user would (no preflight: it would stop at gpu.driver first). vLLM raises "Failed to infer
// device type" while it builds its engine-args parser (vllm/config/device.py; the NVML cause is
// logged only at DEBUG): up and diagnose must name the missing GPU, with the fixes that fit.

const homes: ReturnType<typeof tempHome>[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) {
    killHomeProcesses(h.stateDir);
    h.cleanup();
  }
});

/** The sample the fake worker's no-gpu scenario prints (captured from this run's kind). */
export const NO_GPU_SAMPLE = join(SAMPLES, 'logs', 'worker-1.6.1-no-gpu.log');

/** A traceback line without the paths of the machine that wrote it. */
const portable = (line: string) => stripAnsi(line).replace(/"\/[^"]*\/(site-packages|lib\/python[\d.]+)\//g, '"…/$1/').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, 'TIME');

describe('the real worker without a GPU: up and diagnose name the missing GPU', () => {
  it('up agg --no-preflight: agg-0 exits 1 with gpu.not-visible and its fix; diagnose of the run agrees; nothing left', async () => {
    const h = tempHome('dd-vllm-nogpu-');
    homes.push(h);
    const base = await portBlock();
    // No NO_COLOR: Dynamo's Rust logging colours its lines in the log file, as a user's would be.
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DYNAMO_DEV_HOME: h.stateDir, HF_HUB_OFFLINE: '1', HF_HUB_CACHE: h.hfCache };
    const r = await runCli(['up', 'agg', '--no-preflight', '--json', '--python', vllmPython(), '--model', inject('vllmModelDir'), ...portSets(base)], env, { timeoutMs: 280_000 });
    expect(r.code, r.stderr).toBe(1);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const exited = events.find((e) => e.event === 'exited')!;
    expect(exited).toMatchObject({ process: 'agg-0', code: 1 });
    expect(exited.diagnosis.code).toBe('gpu.not-visible');
    expect(exited.diagnosis.text).toContain('RuntimeError: Failed to infer device type');
    expect(exited.diagnosis.fix).toContain('--gpus all');
    expect(exited.diagnosis.fix).toContain('modprobe nvidia');
    expect(exited.diagnosis.fix).toContain('CUDA_VISIBLE_DEVICES');
    expect(events.at(-1)!.event).toBe('stopped');
    expect(survivors(h.stateDir)).toEqual([]);

    // diagnose of the run's logs: the same cause, and no "Uncaught exception (no known signature)".
    const rec = records(h.stateDir)[0];
    const logs = join(h.stateDir, 'runs', rec.id, 'logs');
    const d = await runCli(['diagnose', logs, '--json'], env);
    expect(d.code).toBe(1);
    const codes = (JSON.parse(d.stdout) as { findings: { code: string }[] }).findings.map((f) => f.code);
    expect(codes).toContain('gpu.not-visible');
    expect(codes).not.toContain('python.exception');
    const text = await runCli(['diagnose', logs], { ...env, NO_COLOR: '1' });
    expect(text.stdout).toContain('No GPU visible to the worker');

    // The fake worker's no-gpu scenario prints the committed sample: the real log still ends as it does.
    const real = readFileSync(rec.processes.find((p: { name: string }) => p.name === 'agg-0')!.log, 'utf8').trimEnd().split('\n').map(portable);
    const sample = readFileSync(NO_GPU_SAMPLE, 'utf8').trimEnd().split('\n').map(portable);
    expect(real.slice(-6)).toEqual(sample.slice(-6));
  }, 300_000);
});
