import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCompatDir, ldLibraryPathCompatDirs, libcudaEntries, parseLdconfig } from '../../../src/host/gpu/parse-compat.js';
import { FIXTURES } from '../../helpers/cli.js';

const ld = (f: string) => readFileSync(join(FIXTURES, 'gpu', f), 'utf8');

describe('compat dirs', () => {
  it('recognises CUDA forward-compat dirs', () => {
    expect(isCompatDir('/usr/local/cuda/compat')).toBe(true);
    expect(isCompatDir('/usr/local/cuda-12.9/compat')).toBe(true);
    expect(isCompatDir('/usr/local/cuda-13.0/compat/lib64')).toBe(true);
    expect(isCompatDir('/usr/lib/x86_64-linux-gnu')).toBe(false);
    expect(isCompatDir('/opt/compat')).toBe(false);
    expect(isCompatDir('/usr/local/cuda/lib64')).toBe(false);
  });
  it('picks them out of LD_LIBRARY_PATH, ignoring empty entries and trailing slashes', () => {
    expect(ldLibraryPathCompatDirs('/usr/local/cuda/lib64::/usr/local/cuda/compat/:/opt/x')).toEqual(['/usr/local/cuda/compat/']);
    expect(ldLibraryPathCompatDirs('/usr/local/nvidia/lib64:/usr/local/cuda-12.9/compat')).toEqual(['/usr/local/cuda-12.9/compat']);
    expect(ldLibraryPathCompatDirs(undefined)).toEqual([]);
    expect(ldLibraryPathCompatDirs('')).toEqual([]);
  });
});

describe('ldconfig -p', () => {
  it('parses entries, including the OS ABI variant, and skips the header', () => {
    const e = parseLdconfig(ld('ldconfig-p.driver.txt'));
    expect(e).toHaveLength(9);
    expect(e.find((x) => x.lib === 'libc.so.6')).toEqual({ lib: 'libc.so.6', arch: 'libc6,x86-64, OS ABI: Linux 3.2.0', path: '/lib/x86_64-linux-gnu/libc.so.6' });
  });
  it('a driver install: one 64-bit libcuda.so.1 (the 32-bit copy does not count), none under compat', () => {
    expect(libcudaEntries(parseLdconfig(ld('ldconfig-p.driver.txt')))).toEqual({ all: ['/lib/x86_64-linux-gnu/libcuda.so.1'], compat: [] });
  });
  it('cuda-compat installed: two libcuda.so.1, one under /usr/local/cuda-12.9/compat', () => {
    expect(libcudaEntries(parseLdconfig(ld('ldconfig-p.compat.txt')))).toEqual({
      all: ['/usr/local/cuda-12.9/compat/libcuda.so.1', '/lib/x86_64-linux-gnu/libcuda.so.1'],
      compat: ['/usr/local/cuda-12.9/compat/libcuda.so.1'],
    });
  });
  it('no driver: no libcuda at all', () => {
    expect(libcudaEntries(parseLdconfig(ld('ldconfig-p.none.txt')))).toEqual({ all: [], compat: [] });
  });
});
