import { describe, expect, it } from 'vitest';
import { gpuClass } from '../../../src/plan/gpu-class.js';

// More product names as nvidia-smi prints them: every data-center family the table names, and
// consumer model numbers without the GeForce brand (no space, four digits), next to the
// professional names that share their digits.
describe('gpuClass: the rest of the data-center table', () => {
  it.each([
    'NVIDIA A10', 'NVIDIA A2', 'NVIDIA A16', 'NVIDIA A30', 'NVIDIA A40', 'NVIDIA A800 80GB PCIe', 'NVIDIA H800', 'NVIDIA H20',
    'NVIDIA GH200 480GB', 'NVIDIA B100', 'NVIDIA B300', 'NVIDIA GB200', 'NVIDIA GB300', 'NVIDIA L20', 'NVIDIA L40', 'NVIDIA H100 PCIe',
    'NVIDIA P100', 'NVIDIA P40', 'NVIDIA P4', 'NVIDIA K80', 'NVIDIA M60', 'NVIDIA M40', 'NVIDIA T4', 'NVIDIA V100', 'NVIDIA DGX Display',
  ])('%s is a data-center GPU', (name) => {
    expect(gpuClass(name)).toBe('datacenter');
  });

  it('a workstation model that only starts like a data-center one is not one', () => {
    expect(gpuClass('NVIDIA RTX A1000')).toBe('unknown');
    expect(gpuClass('NVIDIA A1000')).toBe('unknown');
    expect(gpuClass('NVIDIA L400')).toBe('unknown');
  });
});

describe('gpuClass: consumer model numbers', () => {
  it.each(['NVIDIA RTX 3090', 'NVIDIA RTX4090', 'NVIDIA GTX 1080', 'NVIDIA RTX 960'])('%s (no GeForce in the name) is a consumer GPU', (name) => {
    expect(gpuClass(name)).toBe('consumer');
  });

  it('the same digits on a professional card are not', () => {
    expect(gpuClass('Quadro RTX 4000')).toBe('unknown');
    expect(gpuClass('NVIDIA RTX 4000 SFF Ada Generation')).toBe('unknown');
    expect(gpuClass('NVIDIA RTX 5000 Ada')).toBe('unknown');
    expect(gpuClass('NVIDIA RTX PRO 4000 Blackwell')).toBe('unknown');
  });

  it('a short or long number is no model number', () => {
    expect(gpuClass('NVIDIA RTX 12')).toBe('unknown');
    expect(gpuClass('NVIDIA RTX 40900')).toBe('unknown');
  });
});
