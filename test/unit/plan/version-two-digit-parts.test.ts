import { describe, expect, it } from 'vitest';
import { compareVersions, releaseFor, versionSupport } from '../../../src/plan/dynamo-releases.js';

// Version parts are whole numbers of any length: 1.6.10 is not 1.6.1 followed by a "0".
describe('versions with two-digit parts', () => {
  it('1.6.10 is a later patch than 1.6.9, and no longer the verified 1.6.1', () => {
    expect(compareVersions('1.6.10', '1.6.9')).toBeGreaterThan(0);
    expect(compareVersions('1.6.9', '1.6.10')).toBeLessThan(0);
    expect(versionSupport('1.6.1')).toBe('verified');
    expect(versionSupport('1.6.10')).toBe('supported');
  });

  it('a plan for 1.6.10 names 1.6.10, not an assumption', () => {
    expect(releaseFor('1.6.10')).toMatchObject({ version: '1.6.10', plannedFor: '1.6.10', assumed: false });
  });
});
