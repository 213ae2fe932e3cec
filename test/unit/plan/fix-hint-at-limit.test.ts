import { describe, expect, it } from 'vitest';
import { highestFraction } from '../../../src/plan/fix-hints.js';
import { recipeFrom } from '../../helpers/facts.js';

// "Raise its fraction" is offered only for a real raise: a worker already at what memory.limit
// leaves it (to a billionth, as a fraction written with many decimals may be) is offered none.
describe('the highest fraction a worker can be raised to', () => {
  it('one hundredth under the limit can still be raised to it', () => {
    expect(highestFraction(recipeFrom({ workers: [{ role: 'agg', gpuMemoryUtilization: 0.37 }] as never, memory: { limit: 0.38 } }), 0)).toBe(0.38);
  });

  it('at the limit, even written as 0.379999999, there is nothing to raise to', () => {
    expect(highestFraction(recipeFrom({ workers: [{ role: 'agg', gpuMemoryUtilization: 0.38 }] as never, memory: { limit: 0.38 } }), 0)).toBeNull();
    expect(highestFraction(recipeFrom({ workers: [{ role: 'agg', gpuMemoryUtilization: 0.379999999 }] as never, memory: { limit: 0.38 } }), 0)).toBeNull();
  });
});
