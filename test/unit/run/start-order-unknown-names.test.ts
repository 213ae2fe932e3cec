import { describe, expect, it } from 'vitest';
import { startable } from '../../../src/run/policy/start-order.js';

// A waitFor naming no process of the plan must not hold a process back forever (the plan is
// validated elsewhere; a stale name is no reason for a run that never starts).

describe('start order with a name the plan does not hold', () => {
  it('a process waiting only for an unknown name starts at once', () => {
    expect(startable([{ name: 'agg-0', state: 'waiting', waitFor: ['gone'], gateOpen: false }])).toEqual(['agg-0']);
  });

  it('an unknown name next to a real one: the real one still decides', () => {
    const first = { name: 'agg-0', state: 'kv-allocated' as const, waitFor: [], gateOpen: false };
    const second = { name: 'agg-1', state: 'waiting' as const, waitFor: ['gone', 'agg-0'], gateOpen: false };
    expect(startable([first, second])).toEqual([]);
    expect(startable([{ ...first, gateOpen: true }, second])).toEqual(['agg-1']);
  });
});
