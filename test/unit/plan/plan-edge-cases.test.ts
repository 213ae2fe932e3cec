import { describe, expect, it } from 'vitest';
import { compareVersions, parseVersion } from '../../../src/plan/dynamo-releases.js';
import { fitFractionSets, raiseFractionSet } from '../../../src/plan/fix-hints.js';
import { commentText, generateScript } from '../../../src/plan/script.js';
import type { Plan } from '../../../src/plan/types.js';
import { validateRecipe } from '../../../src/recipe/load.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';

// Edges of the planner's helpers: replicas in the fraction arithmetic of fixes, version strings as
// pip and git builds print them, and script comments.
const recipe = (workers: unknown[]) => validateRecipe({ name: 't', workers }, 't');

describe('fix suggestions count replicas', () => {
  it('"auto" gets what the explicit entries leave, each of their replicas counted', () => {
    // 2 x 0.2 explicit leaves 0.5 for the auto entry.
    expect(fitFractionSets(recipe([{ role: 'decode', replicas: 2, gpuMemoryUtilization: 0.2 }, { role: 'prefill', gpuMemoryUtilization: 'auto' }]), 0.9))
      .toEqual(['--set workers.1.gpuMemoryUtilization=0.5']);
  });

  it('raising one entry leaves room for every replica of the others', () => {
    expect(raiseFractionSet(recipe([{ role: 'decode', replicas: 2, gpuMemoryUtilization: 0.2 }, { role: 'prefill', gpuMemoryUtilization: 0.3 }]), 1))
      .toBe('--set workers.1.gpuMemoryUtilization=0.5');
  });

  it('a scale that would leave one entry at 0 suggests nothing', () => {
    expect(fitFractionSets(recipe([{ role: 'decode', gpuMemoryUtilization: 0.05 }, { role: 'prefill', gpuMemoryUtilization: 0.8 }]), 0.1)).toEqual([]);
  });
});

describe('Dynamo version strings', () => {
  it('two-digit majors, blanks around, local build tags that are no pre-release', () => {
    expect(parseVersion('10.2.0')).toEqual({ nums: [10, 2, 0], pre: false });
    expect(parseVersion(' 1.6.1 ')).toEqual({ nums: [1, 6, 1], pre: false });
    expect(parseVersion('1.6.1+cu128.gitabc')).toEqual({ nums: [1, 6, 1], pre: false });
    expect(parseVersion('ai-dynamo 1.6.1')).toBeNull();
  });

  it('an unreadable version sorts before any readable one', () => {
    expect(compareVersions('main', '0.0.1')).toBe(-1);
    expect(compareVersions('0.0.1', 'main')).toBe(1);
    expect(compareVersions('main', 'dev')).toBe(0);
  });
});

describe('script comments', () => {
  it('a run of control characters becomes one "?"', () => {
    expect(commentText('a\n\r\tb\u0085c')).toBe('a?b?c');
  });

  it('a process without ports says nothing about ports', () => {
    const plan = JSON.parse(readFileSync(join(FIXTURES, 'scripts', 'mocker.plan.json'), 'utf8')) as Plan;
    plan.processes[1].ports = {};
    expect(generateScript(plan)).toContain('\n# agg-0 (agg)\n');
  });
});
