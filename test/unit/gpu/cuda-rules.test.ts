import { describe, expect, it } from 'vitest';
import {
  compareVersions, cudaTag, judgeBuild, majorDriverMin, minDriverFor, parseVersion, TOOLKIT_DRIVER_MIN,
} from '../../../src/plan/cuda-rules.js';

describe('versions', () => {
  it('compares numerically, not as text', () => {
    expect(compareVersions('12.10', '12.9')).toBe(1);
    expect(compareVersions('12.8', '12.8.0')).toBe(0);
    expect(compareVersions('570.133.07', '575.51.03')).toBe(-1);
    expect(compareVersions('595.71.05', '580.65.06')).toBe(1);
    expect(parseVersion('garbage')).toBeNull();
  });
  it('makes wheel tags', () => {
    expect(cudaTag('12.8')).toBe('cu128');
    expect(cudaTag('13.0')).toBe('cu130');
  });
});

describe('driver minimums (FACTS §2)', () => {
  it('has the toolkit table', () => {
    expect(TOOLKIT_DRIVER_MIN['12.9']).toBe('575.51.03');
    expect(minDriverFor('12.9')).toBe('575.51.03');
    expect(minDriverFor('12.8')).toBe('570.26');
    expect(minDriverFor('13.0')).toBe('580.65.06');
    expect(minDriverFor('13.1')).toBe('590.44.01');
    expect(minDriverFor('11.8')).toBe('520.61.05');
  });
  it('maps the missing 12.7 to the next toolkit, and knows nothing of the future', () => {
    expect(minDriverFor('12.7')).toBe('570.26');
    expect(minDriverFor('14.0')).toBeNull();
  });
  it('has the minor-compatibility floors per major', () => {
    expect(majorDriverMin('12.9')).toBe('525.60.13');
    expect(majorDriverMin('13.1')).toBe('580');
    expect(majorDriverMin('11.4')).toBe('450.80.02');
  });
});

describe('judgeBuild', () => {
  it('passes a build at or below the driver CUDA version', () => {
    expect(judgeBuild('12.8', '12.8', '570.133.07', 'consumer')).toEqual({ kind: 'ok' });
    expect(judgeBuild('12.9', '13.2', '595.71.05', 'consumer')).toEqual({ kind: 'ok' });
    expect(judgeBuild('12.6', '12.8', '570.133.07', 'consumer')).toEqual({ kind: 'ok' });
  });
  it('fails 12.9 on a 12.8 driver on a laptop GPU (the Error 804 case) and names the driver it needs', () => {
    expect(judgeBuild('12.9', '12.8', '570.133.07', 'consumer')).toEqual({ kind: 'minor-newer', needDriver: '575.51.03' });
    expect(judgeBuild('12.9', '12.8', '570.133.07', 'unknown')).toEqual({ kind: 'minor-newer', needDriver: '575.51.03' });
  });
  it('warns for a newer minor on a data-center GPU with a driver above the major floor', () => {
    expect(judgeBuild('12.9', '12.8', '570.133.07', 'datacenter')).toEqual({ kind: 'minor-compat', needDriver: '575.51.03' });
    expect(judgeBuild('12.4', '12.0', '520.61.05', 'datacenter').kind).toBe('minor-newer'); // under 525.60.13
  });
  it('fails a newer major everywhere', () => {
    expect(judgeBuild('13.0', '12.8', '570.133.07', 'datacenter')).toEqual({ kind: 'major-newer', needDriver: '580.65.06' });
    expect(judgeBuild('13.0', '12.9', '575.51.03', 'consumer').kind).toBe('major-newer');
  });
});
