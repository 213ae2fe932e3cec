import { describe, expect, it } from 'vitest';
import { BLOCK_LIMIT, fittingBlocks } from '../../helpers/runs.js';

// The e2e files' port blocks (portBlock): setup.test.ts drew from 27,000 + 20 x 300 and got a system
// port of 32,881 on a busy machine ("ports.system: must be <= 32767"). Only blocks that end at or
// below 32,767 are drawn.

describe('portBlock\'s blocks (test helper)', () => {
  it('draws only among the blocks that end at or below 32767', () => {
    for (const [lowest, blocks] of [[27_000, 300], [27_400, 300], [31_000, 80], [21_000, 500]] as const) {
      const last = lowest + 20 * (fittingBlocks(lowest, blocks) - 1);
      expect(last + 19).toBeLessThanOrEqual(BLOCK_LIMIT);
      expect(last + 20 + 19 > BLOCK_LIMIT || fittingBlocks(lowest, blocks) === blocks).toBe(true);
    }
    expect(fittingBlocks(21_000, 500)).toBe(500);
    expect(fittingBlocks(27_000, 300)).toBe(288);
  });
  it('refuses a range with no block under the limit', () => {
    expect(() => fittingBlocks(32_760, 5)).toThrow(/no block of 20 ports from 32760/);
  });
});
