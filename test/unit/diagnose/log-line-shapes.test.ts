import { describe, expect, it } from 'vitest';
import { jsonLineToText, normalizeLine, parseKvTokens, parseTokenCount, stripAnsi, stripPrefixes } from '../../../src/diagnose/line.js';
import { matchLine } from '../../../src/diagnose/scanner.js';

// The shapes real log lines take before a signature sees them (colours, hyperlinks, compose and vLLM
// process prefixes, JSON lines), each with the near-miss that must stay as it is.

const MSG = 'INFO 10-07 05:12:18 [core.py:283] message';

describe('terminal escapes', () => {
  it('a hyperlink (OSC 8) around a word: the link goes, the word stays', () => {
    const linked = 'see \x1b]8;;https://docs.vllm.ai/en/latest/\x07the docs\x1b]8;;\x07 for more';
    expect(stripAnsi(linked)).toBe('see the docs for more');
    // String terminator ESC \ instead of BEL.
    expect(stripAnsi('\x1b]0;worker-0\x1b\\Address already in use')).toBe('Address already in use');
  });

  it('a line without escape codes comes back unchanged', () => {
    expect(stripAnsi('(EngineCore pid=1) [x] ~ 100%')).toBe('(EngineCore pid=1) [x] ~ 100%');
  });
});

describe('docker compose prefixes', () => {
  it('a service with a two-digit replica number', () => {
    expect(stripPrefixes(`vllm-worker-12  | ${MSG}`)).toBe(MSG);
    expect(stripPrefixes(`vllm_worker_10 | ${MSG}`)).toBe(MSG);
  });

  it('an empty line of a service is empty text', () => {
    expect(stripPrefixes('worker-1  |')).toBe('');
  });

  it('a "name-1 | " inside a line is text, not a prefix', () => {
    const table = 'INFO worker table: agg-1  | ready | 8081';
    expect(stripPrefixes(table)).toBe(table);
  });
});

describe('vLLM process prefixes', () => {
  it('a prefix with a two-digit rank, and the spaces after it', () => {
    expect(stripPrefixes(`(VllmWorker rank=10 pid=1309)   ${MSG}`)).toBe(MSG);
    expect(stripPrefixes(`(VllmWorker-10 pid=1309)${MSG}`)).toBe(MSG);
  });

  it('nested prefixes under compose: up to three are removed, a fourth is left as text', () => {
    expect(normalizeLine(`worker-1  | (APIServer pid=1) (EngineCore_DP0 pid=2) (VllmWorker rank=0 pid=3) ${MSG}`)).toBe(MSG);
    expect(stripPrefixes(`(A pid=1) (B pid=2) (C pid=3) (D pid=4) ${MSG}`)).toBe(`(D pid=4) ${MSG}`);
  });

  it('only a prefix at the start of the line is removed', () => {
    const quoted = '(see below) (EngineCore pid=7) ValueError: boom';
    expect(stripPrefixes(quoted)).toBe(quoted);
  });
});

describe('JSON lines', () => {
  it('tracing-subscriber\'s JSON: span and spans are context, not fields of the event', () => {
    const rec = {
      timestamp: '2026-10-07T05:12:21.001002Z', level: 'ERROR', target: 'dynamo_runtime::transports::tcp',
      fields: { message: 'Address already in use', port: 8081, retry: true, peer: null, detail: { os: 98 } },
      span: { name: 'bind' }, spans: [{ name: 'serve' }],
    };
    expect(jsonLineToText(JSON.stringify(rec))).toBe(
      '2026-10-07T05:12:21.001002Z ERROR dynamo_runtime::transports::tcp: Address already in use port=8081 retry=true peer=null detail={"os":98}',
    );
    expect(matchLine(JSON.stringify(rec))?.signature.code).toBe('net.port-in-use');
  });

  it('Python loggers: `ts` and `msg`, and extra fields quoted as JSON', () => {
    const line = '{"ts":"05:12:21","level":"WARNING","msg":"still waiting to acquire lock on /x.lock","logger":"filelock","args":["a"]}';
    expect(jsonLineToText(line)).toBe('05:12:21 WARNING still waiting to acquire lock on /x.lock logger="filelock" args=["a"]');
  });

  it('a record without time, level or target is its message alone; an empty record is empty text', () => {
    expect(jsonLineToText('{"message":"EADDRINUSE"}')).toBe('EADDRINUSE');
    expect(jsonLineToText('{"level":"","message":"x","target":null}')).toBe('null: x');
    expect(jsonLineToText('{}')).toBe('');
  });

  it('leading blanks before the record are fine; a colour code inside the message is dropped', () => {
    expect(jsonLineToText('   {"level":"INFO","message":"\\u001b[32mready\\u001b[0m"}')).toBe('INFO ready');
  });

  it('JSON that is not an object is a plain line', () => {
    expect(jsonLineToText('null')).toBeNull();
    expect(jsonLineToText('"Address already in use"')).toBeNull();
    expect(jsonLineToText('7')).toBeNull();
    expect(jsonLineToText('[{"message":"x"}]')).toBeNull();
    expect(jsonLineToText('Error: {"code":98}')).toBeNull();
    expect(normalizeLine('[{"message":"x"}]')).toBe('[{"message":"x"}]');
  });

  it('a record whose fields is not an object keeps it as a field', () => {
    expect(jsonLineToText('{"message":"m","fields":["a"]}')).toBe('m');
    expect(jsonLineToText('{"message":"m","fields":null}')).toBe('m');
  });
});

describe('token counts', () => {
  it('thousands separators, underscores and zero', () => {
    expect(parseTokenCount('14,816')).toBe(14816);
    expect(parseTokenCount('1_024')).toBe(1024);
    expect(parseTokenCount('0')).toBe(0);
  });

  it('nothing, a negative or a non-number is no count', () => {
    expect(parseTokenCount('')).toBeNull();
    expect(parseTokenCount(' ')).toBeNull();
    expect(parseTokenCount('-5')).toBeNull();
    expect(parseTokenCount('abc')).toBeNull();
    expect(parseTokenCount('Infinity')).toBeNull();
  });

  it('a KV line of zero tokens is a KV size of 0, not "unknown"', () => {
    expect(parseKvTokens('GPU KV cache size: 0 tokens')).toBe(0);
  });
});
