import { describe, expect, it } from 'vitest';
import { RELEASES, compareVersions, parseVersion, releaseFor, versionSupport } from '../../../src/plan/dynamo-releases.js';

describe('Dynamo versions', () => {
  it('parses release, post, dev and rc versions', () => {
    expect(parseVersion('1.6.1')).toEqual({ nums: [1, 6, 1], pre: false });
    expect(parseVersion('1.3.0.post1')).toEqual({ nums: [1, 3, 0], pre: false });
    expect(parseVersion('1.7.0.dev20261026')).toEqual({ nums: [1, 7, 0], pre: true });
    expect(parseVersion('v1.6.0rc2')).toEqual({ nums: [1, 6, 0], pre: true });
    expect(parseVersion('1.6')).toEqual({ nums: [1, 6, 0], pre: false });
    expect(parseVersion('main')).toBeNull();
  });

  it('orders versions; a pre-release comes before its release', () => {
    const sorted = ['1.6.0', '0.9.1', '1.6.0.dev20261021', '1.10.0', '1.6.1', '0.10.0'].sort(compareVersions);
    expect(sorted).toEqual(['0.9.1', '0.10.0', '1.6.0.dev20261021', '1.6.0', '1.6.1', '1.10.0']);
  });

  it('the table is ordered oldest first, and each entry names its sources', () => {
    for (let i = 1; i < RELEASES.length; i++) expect(compareVersions(RELEASES[i - 1].since, RELEASES[i].since)).toBeLessThan(0);
    for (const r of RELEASES) expect(r.sources.length).toBeGreaterThan(0);
  });

  it('picks the facts of the newest entry at or below the version; a dev build of 1.5.0 is still 1.4', () => {
    expect(releaseFor('1.6.1').facts.since).toBe('1.5.0');
    expect(releaseFor('1.5.0.dev20261001').facts.since).toBe('1.4.0');
    expect(releaseFor('1.0.2').facts.since).toBe('1.0.0');
    expect(releaseFor('0.9.1').facts.discovery.flag).toBe('--store-kv');
    expect(releaseFor(null)).toMatchObject({ version: null, plannedFor: '1.6.1', assumed: true });
  });

  it('says where a version stands', () => {
    expect(versionSupport('1.6.1')).toBe('verified');
    expect(versionSupport('1.6.1.post2')).toBe('verified');
    expect(versionSupport('1.6.0')).toBe('supported');
    expect(versionSupport('0.9.0')).toBe('supported');
    expect(versionSupport('0.8.1')).toBe('too-old');
    // 1.7: known from source and release notes only (no wheel on this index, not run here).
    expect(versionSupport('1.7.0')).toBe('from-source');
    expect(versionSupport('1.7.1')).toBe('from-source');
    expect(versionSupport('1.7.0.dev20261026')).toBe('supported');
    expect(versionSupport('1.8.0')).toBe('newer');
    expect(versionSupport('1.8.0.dev1')).toBe('from-source');
  });
});
