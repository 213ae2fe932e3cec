import { describe, expect, it } from 'vitest';
import { orphanName } from '../../../src/run/orphans.js';

// A process list may hand teardown a command line with spaces in front (ps-style padding): the
// report still names a leftover worker by its dynamo module, not by "python3".

describe('the name teardown reports a leftover under', () => {
  it('a python -m command line with leading spaces is named by its module', () => {
    expect(orphanName('   /venv/bin/python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B')).toBe('dynamo.vllm');
    expect(orphanName('\tpython3 -m dynamo.frontend')).toBe('dynamo.frontend');
  });
});
