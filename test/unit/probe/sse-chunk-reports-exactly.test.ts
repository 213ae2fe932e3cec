import { describe, expect, it } from 'vitest';
import { interpretChunk } from '../../../src/host/net/parse-sse.js';

// What one chunk of the frontend's stream tells the probe, field by field: an end or an error is
// nothing else (no token, no usage, not the end unless [DONE]); worker ids stay exact above 2^53 in
// every spelling; server text shown to the user is cut to a line's worth.
const NOTHING = { done: false, hasToken: false, promptTokens: null, cachedTokens: null, hasUsage: false, workerId: null, error: null };

describe('an end or an error is nothing else', () => {
  it('[DONE] ends the stream and carries no token, usage or error', () => {
    expect(interpretChunk('[DONE]')).toEqual({ ...NOTHING, done: true });
  });

  it('an error chunk, unreadable data and a chunk that is no object are errors only: not the end, no token, no usage', () => {
    expect(interpretChunk('{"error":{"message":"Model not found","code":404}}')).toEqual({ ...NOTHING, error: 'Model not found' });
    expect(interpretChunk('{"choices":[')).toEqual({ ...NOTHING, error: 'unreadable stream chunk: {"choices":[' });
    expect(interpretChunk('42')).toEqual({ ...NOTHING, error: 'unexpected stream chunk: 42' });
  });
});

describe('worker ids', () => {
  it('a bare worker id above 2^53 stays exact, compact or with blanks around the colon', () => {
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":18446744073709551557}}').workerId).toBe('18446744073709551557');
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id" : 18446744073709551557}}').workerId).toBe('18446744073709551557');
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":\t18446744073709551557}}').workerId).toBe('18446744073709551557');
  });

  it('a worker id that is long text is cut to 64 characters, bare or per role', () => {
    const long = 'w'.repeat(100);
    expect(interpretChunk(`{"choices":[],"nvext":{"worker_id":"${long}"}}`).workerId).toBe('w'.repeat(64));
    expect(interpretChunk(`{"choices":[],"nvext":{"worker_id":{"decode_worker_id":"${long}"}}}`).workerId).toBe('w'.repeat(64));
  });
});

describe('server text is cut', () => {
  it('a chunk that is no object is quoted with its first 80 characters', () => {
    expect(interpretChunk(`"${'x'.repeat(200)}"`).error).toBe(`unexpected stream chunk: "${'x'.repeat(79)}`);
  });

  it('an error message keeps its first 500 characters', () => {
    expect(interpretChunk(`{"error":{"message":"${'e'.repeat(600)}"}}`).error).toBe('e'.repeat(500));
  });
});
