import { describe, expect, it } from 'vitest';
import { ldLibraryPathCompatDirs } from '../../../src/host/gpu/parse-compat.js';

// ld.so takes a relative LD_LIBRARY_PATH entry relative to the working directory, so
// `LD_LIBRARY_PATH=cuda-12.9/compat` started from /usr/local loads the forward-compat libcuda
// as surely as the absolute path does.
describe('LD_LIBRARY_PATH compat entries without a leading slash', () => {
  it('a relative cuda-X/compat entry is a compat dir, with or without a trailing slash', () => {
    expect(ldLibraryPathCompatDirs('cuda-12.9/compat:lib64')).toEqual(['cuda-12.9/compat']);
    expect(ldLibraryPathCompatDirs('cuda/compat/')).toEqual(['cuda/compat/']);
  });
});
