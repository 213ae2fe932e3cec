import { describe, expect, it } from 'vitest';
import { compareVersions, cudaTag, judgeBuild, minDriverFor, parseVersion } from '../../../src/plan/cuda-rules.js';
import { ldLibraryPathCompatDirs, libcudaEntries, parseLdconfig } from '../../../src/host/gpu/parse-compat.js';

// CUDA and driver version arithmetic at its edges (FACTS §2), and where a forward-compat libcuda
// can come from on a 32-bit system or an LD_LIBRARY_PATH typed by hand.
describe('versions', () => {
  it('a driver floor written as a bare major (580), a leading v or blanks', () => {
    expect(parseVersion('580')).toEqual([580]);
    expect(parseVersion(' v12.8')).toEqual([12, 8]);
    expect(parseVersion('CUDA 12.8')).toBeNull();
    expect(compareVersions('580', '580.65.06')).toBe(-1);
  });

  it('a version longer than the other by a non-zero segment is larger', () => {
    expect(compareVersions('12.8', '12.8.1')).toBe(-1);
    expect(compareVersions('12.8.1', '12.8')).toBe(1);
  });

  it('a wheel tag for a version without a minor', () => {
    expect(cudaTag('13')).toBe('cu130');
  });
});

describe('driver minimums: every toolkit of the CUDA release notes', () => {
  it.each([
    ['12.0', '525.60.13'], ['12.1', '530.30.02'], ['12.2', '535.54.03'], ['12.3', '545.23.06'], ['12.4', '550.54.14'],
    ['12.5', '555.42.02'], ['12.6', '560.28.03'], ['12.6.3', '560.28.03'],
  ])('CUDA %s needs driver %s', (cuda, driver) => {
    expect(minDriverFor(cuda)).toBe(driver);
  });

  it('a minor newer than its major\'s last listed toolkit knows no minimum (no guess from the next major)', () => {
    expect(minDriverFor('11.9')).toBeNull();
    expect(minDriverFor('13.2')).toBeNull();
  });
});

describe('a newer minor on a data-center GPU', () => {
  it('a driver exactly at the major\'s floor is enough for minor-version compatibility; one below is not', () => {
    expect(judgeBuild('12.9', '12.8', '525.60.13', 'datacenter')).toEqual({ kind: 'minor-compat', needDriver: '575.51.03' });
    expect(judgeBuild('12.9', '12.8', '525.60.12', 'datacenter')).toEqual({ kind: 'minor-newer', needDriver: '575.51.03' });
    expect(judgeBuild('12.9', '12.8', null, 'datacenter')).toEqual({ kind: 'minor-newer', needDriver: '575.51.03' });
  });
});

describe('forward-compat libraries on the load path', () => {
  it('LD_LIBRARY_PATH entries are reported without the blanks around them', () => {
    expect(ldLibraryPathCompatDirs(' /usr/local/cuda-12.9/compat :/usr/lib')).toEqual(['/usr/local/cuda-12.9/compat']);
  });

  it('a 32-bit system: its only libcuda.so.1 counts', () => {
    const entries = parseLdconfig('2 libs found in cache `/etc/ld.so.cache\'\n\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n');
    expect(libcudaEntries(entries)).toEqual({ all: ['/usr/lib/i386-linux-gnu/libcuda.so.1'], compat: [] });
  });

  it('a compat dir only counts under a CUDA folder, and compat must come after it', () => {
    expect(ldLibraryPathCompatDirs('/opt/compat:/usr/lib/compat/cuda:/compat:/usr/local/cuda/compat')).toEqual(['/usr/local/cuda/compat']);
  });
});
