import { describe, expect, it } from 'vitest';
import { SseDecoder, SseTooLargeError, interpretChunk } from '../../../src/host/net/parse-sse.js';

// The server-sent-event rules at their edges (WHATWG event stream: lines end in \n, \r\n or \r; a
// field without a colon; one blank after the colon), and the chunk contents a probe must not
// misread: an error of null, a worker id spelled as text, bodies that are not objects.
const all = (d: SseDecoder, ...pieces: string[]) => [...pieces.flatMap((p) => d.push(p)), ...d.end()];

describe('SSE lines', () => {
  it('a lone \\r ends a line, also when the next piece starts with something else than \\n', () => {
    expect(all(new SseDecoder(), 'data: a\rdata: b\r\r')).toEqual([{ event: null, data: 'a\nb' }]);
    expect(all(new SseDecoder(), 'data: a\r', 'data: b\r', '\r')).toEqual([{ event: null, data: 'a\nb' }]);
    expect(all(new SseDecoder(), 'data: a\r', '\n', 'data: b\n\n')).toEqual([{ event: null, data: 'a\nb' }]);
  });

  it('a field without a colon has an empty value; only one blank after the colon is dropped', () => {
    expect(all(new SseDecoder(), 'data\n\n')).toEqual([{ event: null, data: '' }]);
    expect(all(new SseDecoder(), 'data:  two\n\n')).toEqual([{ event: null, data: ' two' }]);
    expect(all(new SseDecoder(), 'event\ndata: x\n\n')).toEqual([{ event: '', data: 'x' }]);
  });

  it('an event name holds for its own event only; unknown fields and events without data are dropped', () => {
    expect(all(new SseDecoder(), 'event: a\ndata: 1\n\ndata: 2\n\nevent: b\nid: 7\nretry: 10\n\n')).toEqual([
      { event: 'a', data: '1' }, { event: null, data: '2' },
    ]);
  });

  it('a stream that ends with nothing pending gives no event; ending twice gives nothing more', () => {
    const d = new SseDecoder();
    expect(all(d, 'data: x\n\n')).toEqual([{ event: null, data: 'x' }]);
    expect(d.end()).toEqual([]);
  });

  it('an event of exactly the limit passes; one character more does not', () => {
    // The limit counts each data line with its newline.
    expect(new SseDecoder(10).push(`data: ${'x'.repeat(9)}\n\n`)).toEqual([{ event: null, data: 'x'.repeat(9) }]);
    expect(() => new SseDecoder(10).push(`data: ${'x'.repeat(10)}\n\n`)).toThrow(SseTooLargeError);
    expect(() => new SseDecoder(10).push(`data: ${'x'.repeat(4)}`)).not.toThrow();
    expect(() => new SseDecoder(10).push(`data: ${'x'.repeat(5)}`)).toThrow(SseTooLargeError);
    expect(new SseTooLargeError(8 << 20).message).toBe('an event of the stream is larger than 8 MiB; not a chat completion chunk');
  });
});

describe('chunk contents', () => {
  it('a token count below 0 or not whole is a broken answer (error), 0 and absent are counts / none', () => {
    const u = (cached: unknown, prompt: unknown = 10) => interpretChunk(JSON.stringify({ usage: { prompt_tokens: prompt, prompt_tokens_details: { cached_tokens: cached } } }));
    expect(u(-1).error).toBe('the frontend sent usage.prompt_tokens_details.cached_tokens -1, which is not a token count (a whole number >= 0)');
    expect(u(2.5).error).toMatch(/cached_tokens 2\.5, which is not a token count/);
    expect(u(0, -3).error).toBe('the frontend sent usage.prompt_tokens -3, which is not a token count (a whole number >= 0)');
    expect(u(0)).toMatchObject({ error: null, cachedTokens: 0, promptTokens: 10 });
    expect(u(null)).toMatchObject({ error: null, cachedTokens: null, hasUsage: true });
  });

  it('JSON that is not an object is an unexpected chunk, said with its text', () => {
    expect(interpretChunk('null').error).toBe('unexpected stream chunk: null');
    expect(interpretChunk('42').error).toBe('unexpected stream chunk: 42');
    expect(interpretChunk(' "hi" ').error).toBe('unexpected stream chunk: "hi"');
    expect(interpretChunk(`{"choices":[${'1'.repeat(200)}`).error).toBe(`unreadable stream chunk: {"choices":[${'1'.repeat(68)}`);
  });

  it('an error as plain text, as an object without a message, and "error": null (no error)', () => {
    expect(interpretChunk('{"error":"overloaded"}').error).toBe('overloaded');
    expect(interpretChunk('{"error":{"code":503}}').error).toBe('{"code":503}');
    expect(interpretChunk('{"error":null,"choices":[{"delta":{"content":"a"}}]}')).toMatchObject({ error: null, hasToken: true });
  });

  it('choices without a delta, a null choice, and non-text deltas are no token', () => {
    expect(interpretChunk('{"choices":[null,{"index":0},{"delta":{"content":null,"reasoning":""}}]}').hasToken).toBe(false);
    expect(interpretChunk('{"choices":[{"delta":{"reasoning":"hm"}}]}').hasToken).toBe(true);
  });

  it('usage that is not an object, or tokens that are not numbers, report nothing', () => {
    expect(interpretChunk('{"choices":[],"usage":"n/a"}')).toMatchObject({ hasUsage: false, promptTokens: null });
    expect(interpretChunk('{"choices":[],"usage":{"prompt_tokens":"12","prompt_tokens_details":{"cached_tokens":"3"}}}'))
      .toMatchObject({ hasUsage: true, promptTokens: null, cachedTokens: null });
    expect(interpretChunk('{"choices":[],"usage":{"prompt_tokens":12,"prompt_tokens_details":7}}')).toMatchObject({ promptTokens: 12, cachedTokens: null });
  });

  it('worker ids spelled as text, with blanks around the colon, or not a number', () => {
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id" : "18446744073709551557"}}').workerId).toBe('18446744073709551557');
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":{"prefill_worker_id" : "99"}}}').workerId).toBe('99');
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":"w-1"}}').workerId).toBe('w-1');
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":{"decode_worker_id":"d-2"}}}').workerId).toBe('d-2');
  });

  it('no worker id: nvext missing, not an object, worker_id null, a boolean, or an object without ids', () => {
    for (const nvext of ['null', '"x"', '{"worker_id":null}', '{"worker_id":true}', '{"worker_id":{"prefill_dp_rank":0}}']) {
      expect(interpretChunk(`{"choices":[],"nvext":${nvext}}`).workerId, nvext).toBeNull();
    }
  });
});
