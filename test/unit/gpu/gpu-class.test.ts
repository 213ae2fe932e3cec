import { describe, expect, it } from 'vitest';
import { gpuClass, supportsForwardCompat } from '../../../src/plan/gpu-class.js';

describe('gpuClass: who may use forward-compat libraries (FACTS §2)', () => {
  it.each([
    ['NVIDIA GeForce RTX 4060 Laptop GPU', 'consumer'],
    ['NVIDIA GeForce RTX 4060 ...', 'consumer'], // the plain table truncates names
    ['NVIDIA GeForce RTX 4080 SUPER', 'consumer'],
    ['NVIDIA GeForce GTX 1050 Ti', 'consumer'],
    ['NVIDIA TITAN RTX', 'consumer'],
    ['NVIDIA RTX A2000 Laptop GPU', 'consumer'],
    ['Quadro T1000 with Max-Q Design', 'consumer'],
    ['NVIDIA RTX 2000 Ada Generation Laptop GPU', 'consumer'],
    ['NVIDIA A100-SXM4-80GB', 'datacenter'],
    ['NVIDIA H100 80GB HBM3', 'datacenter'],
    ['NVIDIA H200', 'datacenter'],
    ['NVIDIA B200', 'datacenter'],
    ['NVIDIA L4', 'datacenter'],
    ['NVIDIA L40S', 'datacenter'],
    ['NVIDIA A10G', 'datacenter'],
    ['Tesla T4', 'datacenter'],
    ['Tesla V100-SXM2-16GB', 'datacenter'],
    ['NVIDIA RTX 6000 Ada Generation', 'unknown'],
    ['NVIDIA RTX A6000', 'unknown'],
    ['NVIDIA RTX A4000', 'unknown'],
    ['Quadro RTX 8000', 'unknown'],
    ['NVIDIA RTX PRO 6000 Blackwell Server Edition', 'unknown'],
    ['NVIDIA GB10', 'unknown'],
    ['Orin (nvgpu)', 'jetson'],
    ['', 'unknown'],
  ])('%s -> %s', (name, cls) => {
    expect(gpuClass(name)).toBe(cls);
  });

  it('only data-center and Jetson are known to accept forward compatibility', () => {
    expect(supportsForwardCompat('datacenter')).toBe(true);
    expect(supportsForwardCompat('jetson')).toBe(true);
    expect(supportsForwardCompat('consumer')).toBe(false);
    expect(supportsForwardCompat('unknown')).toBe(false);
  });
});
