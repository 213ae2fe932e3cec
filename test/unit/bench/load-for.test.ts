import { describe, expect, it } from 'vitest';
import { DEFAULT_LOAD, loadFor, MAX_PREFIXES, PRESETS } from '../../../src/bench/presets.js';

// The routing experiment keeps ~6 sends per shared prefix whatever --requests is: with 12 prefixes
// fixed, 36 requests sent each prefix 3 times and KV routing's lead over random at concurrency 4
// shrank to 2.6 points of hit share (real 1.6.1 mocker), 72 requests gave 15.
describe('loadFor: sends per prefix kept', () => {
  const routing = PRESETS.routing.load;
  it.each([[72, 12], [36, 6], [48, 8], [8, 2], [1, 2], [384, 64], [100_000, MAX_PREFIXES]])('%i requests: %i prefixes', (requests, count) => {
    expect(loadFor(routing, requests).prefixes).toEqual({ count, tokens: 1024 });
  });
  it('keeps the rest of the shape, and a load without a prefix pool as it is', () => {
    expect(loadFor(routing, 36)).toMatchObject({ inputTokens: 32, outputTokens: 8 });
    expect(loadFor(DEFAULT_LOAD, 36)).toBe(DEFAULT_LOAD);
  });
});
