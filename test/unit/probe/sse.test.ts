import { describe, expect, it } from 'vitest';
import { SseDecoder, SseTooLargeError, interpretChunk } from '../../../src/host/net/parse-sse.js';

// Chunks shaped like the Dynamo frontend's (FACTS §4): compact JSON, nvext.worker_id on the first
// chunk and on the usage chunk, usage in a final chunk with empty choices, then [DONE].
const FIRST =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1759817540,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"delta":{"content":"Paris","role":"assistant"},"finish_reason":null,"logprobs":null}],"nvext":{"worker_id":{"prefill_worker_id":7587888512394541,"prefill_dp_rank":0,"decode_worker_id":7587888512394541,"decode_dp_rank":0}}}';
const MIDDLE =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1759817540,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"delta":{"content":" is"},"finish_reason":null,"logprobs":null}]}';
const LAST =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1759817540,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"delta":{"content":""},"finish_reason":"length","logprobs":null}]}';
const USAGE =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1759817540,"model":"Qwen/Qwen3-0.6B","choices":[],"usage":{"prompt_tokens":1520,"completion_tokens":8,"total_tokens":1528,"prompt_tokens_details":{"cached_tokens":1488}},"nvext":{"worker_id":{"prefill_worker_id":7587888512394541,"prefill_dp_rank":0,"decode_worker_id":7587888512394541,"decode_dp_rank":0}}}';
const STREAM = [FIRST, MIDDLE, LAST, USAGE, '[DONE]'].map((d) => `data: ${d}\n\n`).join('');

describe('SseDecoder', () => {
  it('splits a whole stream into its data payloads', () => {
    const d = new SseDecoder();
    const events = [...d.push(STREAM), ...d.end()];
    expect(events.map((e) => e.data)).toEqual([FIRST, MIDDLE, LAST, USAGE, '[DONE]']);
  });

  it('gives the same events whatever the network chunking, including a \\r\\n split in two', () => {
    const crlf = STREAM.replace(/\n/g, '\r\n');
    for (const size of [1, 3, 7, 64, 1000]) {
      const d = new SseDecoder();
      const got: string[] = [];
      for (let i = 0; i < crlf.length; i += size) got.push(...d.push(crlf.slice(i, i + size)).map((e) => e.data));
      got.push(...d.end().map((e) => e.data));
      expect(got, `chunk size ${size}`).toEqual([FIRST, MIDDLE, LAST, USAGE, '[DONE]']);
    }
  });

  it('ignores comments, keeps event names, joins multi-line data, and flushes an unterminated last event', () => {
    const d = new SseDecoder();
    const events = [
      ...d.push(': keep-alive\n\nevent: annotation\ndata: {"a":1}\n\ndata: line1\ndata: line2\n\ndata:[DONE]'),
      ...d.end(),
    ];
    expect(events).toEqual([
      { event: 'annotation', data: '{"a":1}' },
      { event: null, data: 'line1\nline2' },
      { event: null, data: '[DONE]' },
    ]);
  });
});

describe('interpretChunk', () => {
  it('reads the first token and the worker id from the first chunk', () => {
    const c = interpretChunk(FIRST);
    expect(c).toMatchObject({ hasToken: true, workerId: '7587888512394541', hasUsage: false, cachedTokens: null, done: false });
  });

  it('reads prompt and cached tokens from the usage chunk with empty choices', () => {
    expect(interpretChunk(USAGE)).toMatchObject({ hasToken: false, promptTokens: 1520, cachedTokens: 1488, hasUsage: true });
  });

  it('an empty delta is not a token; [DONE] ends the stream', () => {
    expect(interpretChunk(LAST).hasToken).toBe(false);
    expect(interpretChunk('[DONE]').done).toBe(true);
  });

  it('cached tokens are null when usage has no prompt_tokens_details (older builds)', () => {
    const c = interpretChunk('{"choices":[],"usage":{"prompt_tokens":1520,"completion_tokens":8,"total_tokens":1528}}');
    expect(c).toMatchObject({ hasUsage: true, promptTokens: 1520, cachedTokens: null });
  });

  it('keeps worker ids above 2^53 exact (u64)', () => {
    const c = interpretChunk('{"choices":[],"nvext":{"worker_id":{"prefill_worker_id":18446744073709551557,"prefill_dp_rank":0,"decode_worker_id":18446744073709551557,"decode_dp_rank":0}}}');
    expect(c.workerId).toBe('18446744073709551557');
  });

  it('falls back to the decode worker when only it is filled, and to a bare id', () => {
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":{"prefill_worker_id":null,"decode_worker_id":42}}}').workerId).toBe('42');
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":7}}').workerId).toBe('7');
    expect(interpretChunk(MIDDLE).workerId).toBeNull();
  });

  it('counts reasoning text as the first token', () => {
    expect(interpretChunk('{"choices":[{"index":0,"delta":{"reasoning_content":"Let"}}]}').hasToken).toBe(true);
  });

  it('reports an error sent inside the stream and unreadable data, never throws', () => {
    expect(interpretChunk('{"error":{"message":"Model not found","code":404}}').error).toBe('Model not found');
    expect(interpretChunk('{"choices":[').error).toMatch(/unreadable stream chunk/);
  });
});

describe('hostile streams (issue 12, cause 9)', () => {
  it('an event or a line past the limit throws SseTooLargeError; below it, events pass', () => {
    const d = new SseDecoder(1000);
    expect(d.push(`data: ${'x'.repeat(900)}\n\n`)).toHaveLength(1);
    expect(() => new SseDecoder(1000).push(`data: ${'x'.repeat(1001)}`)).toThrow(SseTooLargeError);
    const many = new SseDecoder(1000);
    expect(() => { for (let i = 0; i < 20; i++) many.push(`data: ${'x'.repeat(99)}\n`); }).toThrow(/larger than/);
  });

  it('a long line arriving in small pieces is searched once (linear, not quadratic)', () => {
    const d = new SseDecoder(64 << 20);
    const piece = 'x'.repeat(4096);
    const t0 = performance.now();
    d.push('data: ');
    for (let i = 0; i < 8192; i++) d.push(piece); // 32 MiB in 4 KiB pieces
    const events = d.push('\n\n');
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(events[0].data.length).toBe(32 << 20);
  });

  it('server text is made printable: escapes removed, control characters become a space', () => {
    expect(interpretChunk('{"error":{"message":"\\u001b[31mboom\\u001b[0m\\nnext\\u0007"}}').error).toBe('boom next ');
    expect(interpretChunk('{"choices":[],"nvext":{"worker_id":"w\\u001b[2J1"}}').workerId).toBe('w1');
  });
});
