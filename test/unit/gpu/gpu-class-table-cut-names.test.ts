import { describe, expect, it } from 'vitest';
import { gpuClass } from '../../../src/plan/gpu-class.js';

// nvidia-smi's plain table cuts a name after 24 characters and adds "..."
// (samples/nvidia-smi/plain.laptop-570.txt: "NVIDIA GeForce RTX 4060 ..."). A professional Ada card then
// loses "Generation" but keeps "Ada", further on than right after its model number.
describe('gpuClass of names the plain table cut', () => {
  it('"NVIDIA RTX 4000 SFF Ada ..." (RTX 4000 SFF Ada Generation) is not called a consumer GPU', () => {
    expect(gpuClass('NVIDIA RTX 4000 SFF Ada ...')).toBe('unknown');
    expect(gpuClass('NVIDIA RTX 4000 SFF Ada Generation')).toBe('unknown');
  });

  it('a GeForce name cut the same way is still a consumer GPU', () => {
    expect(gpuClass('NVIDIA GeForce RTX 4060 ...')).toBe('consumer');
  });
});
