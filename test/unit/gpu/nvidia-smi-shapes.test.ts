import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyFailure, cleanValue, parseComputeApps, parseCudaVersion, parseMiB, parseQueryGpu } from '../../../src/host/gpu/parse-nvidia-smi.js';
import { SAMPLES } from '../../helpers/cli.js';

// nvidia-smi output in the shapes other drivers, MIG and hand-made CSVs give, next to the values
// that only look like placeholders.
const sample = (f: string) => readFileSync(join(SAMPLES, 'nvidia-smi', f), 'utf8');
const MIG = 'MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f';

describe('compute apps', () => {
  it('a MIG uuid in nvidia-smi output is the GPU the process runs on', () => {
    expect(parseComputeApps(`48211, VLLM::EngineCore, 3010, ${MIG}\n`)).toEqual([
      { pid: 48211, processName: 'VLLM::EngineCore', usedMiB: 3010, gpuUuid: MIG },
    ]);
  });

  it('a name with a comma and no uuid column: the last column is the memory', () => {
    expect(parseComputeApps('9001, python -c import torch, x, 3010\n')).toEqual([
      { pid: 9001, processName: 'python -c import torch, x', usedMiB: 3010, gpuUuid: null },
    ]);
  });

  it('a line with only a pid is no process', () => {
    expect(parseComputeApps('48211\n48377, VLLM::EngineCore, 3010\n').map((a) => a.pid)).toEqual([48377]);
  });
});

describe('query-gpu', () => {
  it('CRLF line endings, blank lines and commas without blanks read the same', () => {
    const crlf = sample('query-gpu.two-gpus-595.csv').split('\n').join('\r\n\r\n').replace(/, /g, ',');
    expect(parseQueryGpu(crlf)).toEqual(parseQueryGpu(sample('query-gpu.two-gpus-595.csv')));
    expect(parseQueryGpu(crlf).map((g) => g.name)).toEqual(['NVIDIA GeForce RTX 4080 SUPER', 'NVIDIA RTX 6000 Ada Generation']);
  });

  it('an index that is not a whole number is no GPU', () => {
    expect(parseQueryGpu('1x, NVIDIA GeForce RTX 4080 SUPER\nx1, NVIDIA GeForce RTX 4080 SUPER\n1.5, NVIDIA\n')).toEqual([]);
  });
});

describe('values', () => {
  it('only a whole field in brackets, N/A or NA is a placeholder', () => {
    for (const v of ['[N/A]', 'N/A', 'NA', 'n/a']) expect(cleanValue(v), v).toBeNull();
    for (const v of ['[N/A] (MIG)', 'GPU [0]', 'NAND', 'sna', 'N/A2']) expect(cleanValue(v), v).toBe(v);
  });

  it('every unit nvidia-smi may print, in MiB', () => {
    expect(parseMiB('8188MiB')).toBe(8188);
    expect(parseMiB('8 GB')).toBe(8192);
    expect(parseMiB('7.25 GiB')).toBe(7424);
    expect(parseMiB('2048 KiB')).toBe(2);
    expect(parseMiB('2048 KB')).toBe(2);
    expect(parseMiB('1 TiB')).toBe(1_048_576);
    expect(parseMiB('1 TB')).toBe(1_048_576);
    expect(parseMiB('100 MB')).toBe(100);
    expect(parseMiB('8188 mib')).toBe(8188);
  });

  it('a number with words around it is not a size', () => {
    expect(parseMiB('8188 MiB free')).toBeNull();
    expect(parseMiB('about 8188')).toBeNull();
    expect(parseMiB('7. GiB')).toBeNull();
  });

  it('a CUDA version with a two-digit minor', () => {
    expect(parseCudaVersion('| NVIDIA-SMI 610.10   Driver Version: 610.10   CUDA Version: 13.10    |')).toBe('13.10');
  });
});

describe('failures', () => {
  it('the message is the first three lines with text', () => {
    const f = classifyFailure('Unable to determine the device handle for GPU0000:01:00.0: Unknown Error\n\n\nsecond\n   \nthird\nfourth\n', 255);
    expect(f).toEqual({ reason: 'error', message: 'nvidia-smi exited with code 255: Unable to determine the device handle for GPU0000:01:00.0: Unknown Error second third' });
  });

  it('nothing printed: the exit code says what it can', () => {
    expect(classifyFailure('', 9)).toEqual({ reason: 'no-driver', message: 'nvidia-smi exited with code 9: the NVIDIA driver is not loaded' });
    expect(classifyFailure('  \n', 18)).toEqual({ reason: 'mismatch', message: 'nvidia-smi exited with code 18: Driver/library version mismatch' });
    expect(classifyFailure('', 6)).toEqual({ reason: 'error', message: 'nvidia-smi exited with code 6 and printed nothing' });
    expect(classifyFailure('', null)).toEqual({ reason: 'error', message: 'nvidia-smi exited with code unknown and printed nothing' });
    expect(classifyFailure('boom', null)).toEqual({ reason: 'error', message: 'nvidia-smi exited with code unknown: boom' });
  });

  it('text wins over the exit code', () => {
    expect(classifyFailure(sample('failed.mismatch.txt'), 9)).toEqual({
      reason: 'mismatch', message: 'Failed to initialize NVML: Driver/library version mismatch NVML library version: 580.159',
    });
    expect(classifyFailure('NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver.', 18).reason).toBe('no-driver');
  });
});
