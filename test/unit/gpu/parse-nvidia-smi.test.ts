import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  classifyFailure, cleanValue, parseComputeApps, parseCudaVersion, parseDriverVersion, parseMiB, parseQueryGpu,
} from '../../../src/host/gpu/parse-nvidia-smi.js';
import { FIXTURES, SAMPLES } from '../../helpers/cli.js';

const sample = (f: string) => readFileSync(join(SAMPLES, 'nvidia-smi', f), 'utf8');
const made = (f: string) => readFileSync(join(FIXTURES, 'gpu', f), 'utf8');

describe('parseQueryGpu on the real samples', () => {
  it('reads the laptop GPU on driver 570', () => {
    expect(parseQueryGpu(sample('query-gpu.laptop-570.csv'))).toEqual([{
      index: 0, name: 'NVIDIA GeForce RTX 4060 Laptop GPU', uuid: 'GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60',
      driverVersion: '570.133.07', memoryTotalMiB: 8188, memoryUsedMiB: 512, memoryFreeMiB: 7676, computeCap: '8.9',
      pciBusId: '00000000:01:00.0',
    }]);
  });

  it('reads two GPUs in index order', () => {
    const gpus = parseQueryGpu(sample('query-gpu.two-gpus-595.csv'));
    expect(gpus.map((g) => [g.index, g.name, g.memoryTotalMiB, g.memoryFreeMiB])).toEqual([
      [0, 'NVIDIA GeForce RTX 4080 SUPER', 16376, 15348],
      [1, 'NVIDIA RTX 6000 Ada Generation', 49140, 48851],
    ]);
    expect(gpus[1].pciBusId).toBe('00000000:41:00.0');
  });

  it('turns [N/A] memory on unified-memory systems into null, not 0', () => {
    const [g] = parseQueryGpu(sample('query-gpu.unified-memory.csv'));
    expect(g.name).toBe('NVIDIA GB10');
    expect([g.memoryTotalMiB, g.memoryUsedMiB, g.memoryFreeMiB]).toEqual([null, null, null]);
    expect(g.computeCap).toBe('12.1');
  });

  it('tolerates units, a header line and every placeholder', () => {
    expect(parseQueryGpu(made('query-gpu.units.csv'))[0]).toMatchObject({ memoryTotalMiB: 8188, memoryUsedMiB: 512, memoryFreeMiB: 7676 });
    const withHeader = parseQueryGpu(made('query-gpu.header-units.csv'));
    expect(withHeader).toHaveLength(1);
    expect(withHeader[0]).toMatchObject({ index: 0, memoryFreeMiB: 15348, driverVersion: '595.71.05' });
    const [p] = parseQueryGpu(made('query-gpu.placeholders.csv'));
    expect(p).toMatchObject({ uuid: null, memoryTotalMiB: 81920, memoryUsedMiB: null, memoryFreeMiB: null, computeCap: null });
  });

  it('maps fields by the order they were requested', () => {
    const gpus = parseQueryGpu('7676, NVIDIA GeForce RTX 4060 Laptop GPU, 0\n', ['memory.free', 'name', 'index']);
    expect(gpus[0]).toMatchObject({ index: 0, memoryFreeMiB: 7676, memoryTotalMiB: null, uuid: null });
  });

  it('returns no GPU for empty output', () => {
    expect(parseQueryGpu('')).toEqual([]);
  });
});

describe('value helpers', () => {
  it('knows every placeholder nvidia-smi prints', () => {
    for (const v of ['[N/A]', 'N/A', '[Not Supported]', '[Insufficient Permissions]', '[Unknown Error]', '']) expect(cleanValue(v)).toBeNull();
    expect(cleanValue(' 8.9 ')).toBe('8.9');
  });
  it('reads MiB with and without units', () => {
    expect(parseMiB('8188')).toBe(8188);
    expect(parseMiB('8188 MiB')).toBe(8188);
    expect(parseMiB('2 GiB')).toBe(2048);
    expect(parseMiB('[N/A]')).toBeNull();
    expect(parseMiB('lots')).toBeNull();
  });
});

describe('driver CUDA version', () => {
  it('comes from the plain header (570 sample and a 595 header)', () => {
    expect(parseCudaVersion(sample('plain.laptop-570.txt'))).toBe('12.8');
    expect(parseDriverVersion(sample('plain.laptop-570.txt'))).toBe('570.133.07');
    expect(parseCudaVersion(made('plain.595.txt'))).toBe('13.2');
    expect(parseCudaVersion(made('plain.535.txt'))).toBe('12.2');
  });
  it('comes from -q', () => {
    expect(parseCudaVersion(sample('q-excerpt.595.txt'))).toBe('13.2');
    expect(parseDriverVersion(sample('q-excerpt.595.txt'))).toBe('595.71.05');
  });
  it('comes from --version, and is null where --version does not print it', () => {
    expect(parseCudaVersion(made('version.595.txt'))).toBe('13.2');
    expect(parseDriverVersion(made('version.595.txt'))).toBe('595.71.05');
    expect(parseCudaVersion(made('version.535-no-cuda.txt'))).toBeNull();
    expect(parseCudaVersion('| NVIDIA-SMI 570.1  Driver Version: 570.1  CUDA Version: N/A |')).toBeNull();
  });
});

describe('parseComputeApps', () => {
  it('reads the 3-column sample (no gpu uuid)', () => {
    expect(parseComputeApps(sample('compute-apps.csv'))).toEqual([
      { pid: 48211, processName: 'VLLM::EngineCore', usedMiB: 3010, gpuUuid: null },
      { pid: 48377, processName: 'VLLM::EngineCore', usedMiB: 3010, gpuUuid: null },
      { pid: 2165, processName: '/usr/bin/kwin_wayland', usedMiB: 25, gpuUuid: null },
    ]);
  });
  it('reads 4 columns, names with commas and [N/A] memory', () => {
    const apps = parseComputeApps(made('compute-apps.4col.csv'));
    expect(apps[0]).toEqual({ pid: 48211, processName: 'VLLM::EngineCore', usedMiB: 3010, gpuUuid: 'GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60' });
    expect(apps[1].gpuUuid).toBe('GPU-7a7b7c7d-1111-2222-3333-444455556666');
    expect(apps[2]).toEqual({ pid: 9001, processName: 'python -c import torch, x', usedMiB: null, gpuUuid: 'GPU-3f1c2a9e-8d7b-4c55-9a0e-1b2c3d4e5f60' });
  });
  it('reads units and ignores a header and "No running processes found"', () => {
    expect(parseComputeApps('pid, process_name, used_gpu_memory [MiB]\n12, VLLM::EngineCore, 3010 MiB\n')).toEqual([
      { pid: 12, processName: 'VLLM::EngineCore', usedMiB: 3010, gpuUuid: null },
    ]);
    expect(parseComputeApps('No running processes found\n')).toEqual([]);
    expect(parseComputeApps('')).toEqual([]);
  });
});

describe('classifyFailure keeps the message and finds the reason', () => {
  it('no driver', () => {
    const f = classifyFailure(sample('failed.no-driver.txt'), 9);
    expect(f.reason).toBe('no-driver');
    expect(f.message).toContain("couldn't communicate with the NVIDIA driver");
  });
  it('driver/library mismatch', () => {
    const f = classifyFailure(sample('failed.mismatch.txt'), 18);
    expect(f.reason).toBe('mismatch');
    expect(f.message).toContain('Driver/library version mismatch');
    expect(f.message).toContain('580.159');
  });
  it('no devices', () => {
    expect(classifyFailure(made('failed.no-devices.txt'), 6)).toEqual({ reason: 'no-devices', message: 'No devices were found' });
  });
  it('falls back to exit codes, then to error with the text', () => {
    expect(classifyFailure('', 9).reason).toBe('no-driver');
    expect(classifyFailure('', 18).reason).toBe('mismatch');
    const other = classifyFailure('Unable to determine the device handle for GPU0000:01:00.0: Unknown Error', 255);
    expect(other.reason).toBe('error');
    expect(other.message).toContain('Unknown Error');
    expect(other.message).toContain('255');
  });
});
