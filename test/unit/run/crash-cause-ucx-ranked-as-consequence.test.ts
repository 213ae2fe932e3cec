import { describe, expect, it } from 'vitest';
import { rankFindings } from '../../../src/run/diagnosis.js';
import type { Finding } from '../../../src/diagnose/types.js';

// The crash report's "why" of a worker whose transfer peer went away: UCX saying the peer is
// unreachable follows from the real cause (the other side died), so the cause is shown first even
// when UCX's line comes earlier in the log.

const f = (code: string, line: number): Finding => ({
  code, severity: 'error', line, file: 'w.log', text: `line ${line}`, explanation: `${code} explained`, fix: `${code} fix`,
}) as Finding;

describe('the cause shown for a crashed worker', () => {
  it('a UCX "unreachable" error ranks after the specific error it follows from, even from an earlier line', () => {
    expect(rankFindings([f('ucx.unreachable', 3), f('cuda.oom', 40)]).map((x) => x.code)).toEqual(['cuda.oom', 'ucx.unreachable']);
  });
  it('and after the generic uncaught exception too (a consequence says least about the cause)', () => {
    expect(rankFindings([f('ucx.unreachable', 3), f('python.exception', 40)]).map((x) => x.code)).toEqual(['python.exception', 'ucx.unreachable']);
  });
});
