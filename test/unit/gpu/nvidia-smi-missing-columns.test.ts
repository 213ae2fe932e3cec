import { describe, expect, it } from 'vitest';
import { parseComputeApps, parseQueryGpu } from '../../../src/host/gpu/parse-nvidia-smi.js';

// nvidia-smi prints a placeholder for a value it cannot read, and a line cut short loses its last
// columns: the GPU and the process stay listed, with what is known.
describe('a GPU whose name nvidia-smi cannot read', () => {
  it('is shown as "GPU <index>", its memory still read', () => {
    const gpus = parseQueryGpu('1, [Unknown Error], GPU-7a7b7c7d-1111-2222-3333-444455556666, 595.71.05, 49140, 289, 48851, 8.9, 00000000:41:00.0\n');
    expect(gpus).toHaveLength(1);
    expect(gpus[0]).toMatchObject({ index: 1, name: 'GPU 1', memoryTotalMiB: 49140, memoryFreeMiB: 48851 });
  });
});

describe('a compute-apps line with only a pid and a name', () => {
  it('still lists the process, its memory and GPU unknown', () => {
    expect(parseComputeApps('48211, VLLM::EngineCore\n')).toEqual([
      { pid: 48211, processName: 'VLLM::EngineCore', usedMiB: null, gpuUuid: null },
    ]);
  });

  it('a name with ", " in it is kept whole: its last part is no memory amount', () => {
    expect(parseComputeApps('9001, python -c import torch, x\n')).toEqual([
      { pid: 9001, processName: 'python -c import torch, x', usedMiB: null, gpuUuid: null },
    ]);
  });
});
