import { describe, expect, it } from 'vitest';
import { SseDecoder, SseTooLargeError } from '../../../src/host/net/parse-sse.js';

// How the probe's stream decoder frames events when the frontend's bytes arrive in arbitrary reads
// (WHATWG event-stream rules; the Dynamo frontend ends lines with \n and events with a blank line,
// FACTS §4): events must come out the same whatever the split, and the size limit must count only
// what is still unfinished.
const CHUNK = '{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Paris"}}]}';
const STREAM = [CHUNK, CHUNK, '[DONE]'].map((d) => `data: ${d}\n\n`).join('');
const all = (d: SseDecoder, ...pieces: string[]) => [...pieces.flatMap((p) => d.push(p)), ...d.end()];

describe('the frontend\'s \\n-only stream in arbitrary reads', () => {
  it('gives the same events when every character arrives alone (a blank line read on its own still ends the event)', () => {
    expect(all(new SseDecoder(), ...STREAM).map((e) => e.data)).toEqual([CHUNK, CHUNK, '[DONE]']);
  });

  it('a two-line event with \\r\\n line ends inside one read stays one event', () => {
    expect(all(new SseDecoder(), 'data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n')).toEqual([
      { event: null, data: 'a\nb' }, { event: null, data: 'c' },
    ]);
  });

  it('a last line without its newline, arriving in pieces, is whole when the stream ends', () => {
    expect(all(new SseDecoder(), 'data: [DO', 'NE', ']')).toEqual([{ event: null, data: '[DONE]' }]);
  });
});

describe('fields', () => {
  it('an empty data line is an empty line of the event', () => {
    expect(all(new SseDecoder(), 'data:\n\n')).toEqual([{ event: null, data: '' }]);
    expect(all(new SseDecoder(), 'data: a\ndata:\ndata: b\n\n')).toEqual([{ event: null, data: 'a\n\nb' }]);
    expect(all(new SseDecoder(), 'event:\ndata: x\n\n')).toEqual([{ event: '', data: 'x' }]);
  });

  it('id and retry fields do not name the event', () => {
    expect(all(new SseDecoder(), 'id: 7\nretry: 3000\ndata: x\n\n')).toEqual([{ event: null, data: 'x' }]);
  });
});

describe('the size limit over reads', () => {
  it('a read holding a whole event and the start of the next counts only the unfinished line: exactly the limit passes, one more does not', () => {
    const d = new SseDecoder(16);
    expect(d.push('data: 0123456789\n\ndata: 01')).toEqual([{ event: null, data: '0123456789' }]);
    expect(d.push('23456789')).toEqual([]); // the unfinished line now holds exactly 16 characters
    expect(() => d.push('x')).toThrow(SseTooLargeError);
  });

  it('the error names itself when printed', () => {
    expect(String(new SseTooLargeError(8 << 20))).toBe('SseTooLargeError: an event of the stream is larger than 8 MiB; not a chat completion chunk');
  });
});
