import { describe, expect, it } from 'vitest';
import { asDiskFull, DiskFullError } from '../../../src/errors.js';

describe('asDiskFull', () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: no space left on device, write`), { code });
  it('ENOSPC and EDQUOT name the file and the way out; anything else stays as it was', () => {
    const e = asDiskFull(errno('ENOSPC'), '/s/runs/r1/run.json');
    expect(e).toBeInstanceOf(DiskFullError);
    expect((e as Error).message).toBe('cannot write /s/runs/r1/run.json: no space left on device (ENOSPC); free space on that filesystem (df -h /s/runs/r1) or use a state directory on another one (--state-dir DIR or DYNAMO_DEV_HOME=DIR)');
    expect((asDiskFull(errno('EDQUOT'), '/up.lock') as Error).message).toMatch(/^cannot write \/up\.lock: disk quota exceeded \(EDQUOT\); free space on that filesystem \(df -h \/\)/);
    const other = errno('EACCES');
    expect(asDiskFull(other, '/x')).toBe(other);
    expect(asDiskFull('text', '/x')).toBe('text');
  });
});
