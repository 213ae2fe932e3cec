import { describe, expect, it } from 'vitest';
import { curlLine, formatNdjson } from '../../../src/run/events.js';
import { rankFindings } from '../../../src/run/diagnosis.js';
import { diagnoseLog } from '../../../src/run/diagnosis.js';
import { join } from 'node:path';
import { SAMPLES } from '../../helpers/cli.js';
import type { Finding } from '../../../src/diagnose/types.js';

describe('NDJSON events', () => {
  it('one line per event, "event" first and "ts" on every line', () => {
    const line = formatNdjson({ event: 'log-ready', process: 'agg-0', kvTokens: 14_816, ms: 812 }, new Date('2026-11-30T10:00:00Z'));
    expect(line).toBe('{"event":"log-ready","ts":"2026-11-30T10:00:00.000Z","process":"agg-0","kvTokens":14816,"ms":812}\n');
  });

  it('view-only events stay out of the stream', () => {
    expect(formatNdjson({ event: 'line', process: 'agg-0', text: 'x' })).toBeNull();
    expect(formatNdjson({ event: 'state', process: 'agg-0', state: 'loading', kvTokens: null, pid: 1 })).toBeNull();
  });

  it('the curl line is valid shell with the model in a JSON body', () => {
    expect(curlLine('http://127.0.0.1:8000', 'Qwen/Qwen3-0.6B')).toBe(
      `curl -s http://127.0.0.1:8000/v1/chat/completions -H 'Content-Type: application/json' -d '{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"Hello!"}],"max_tokens":32}'`,
    );
  });
});

describe('crash diagnosis', () => {
  const f = (code: string, severity: Finding['severity'], line: number): Finding => ({ code, severity, count: 1, file: 'w.log', line, text: code, explanation: '', fix: '' });

  it('root cause first: errors before warnings, specific before the generic engine failure, earliest line; no info findings', () => {
    const ranked = rankFindings([f('vllm.kv-size', 'info', 1), f('vllm.engine-failed', 'error', 2), f('hf.lock-wait', 'warn', 1), f('cuda.error804', 'error', 5)]);
    expect(ranked.map((x) => x.code)).toEqual(['cuda.error804', 'vllm.engine-failed', 'hf.lock-wait']);
  });

  it.each([
    ['worker-error804.log', 'cuda.error804'],
    ['worker-free-memory.log', 'vllm.free-memory'],
    ['worker-ucx-no-am.log', 'ucx.no-am-transport'],
    ['worker-lock-wait.log', 'hf.lock-wait'],
  ])('%s -> %s with a title, explanation and fix', async (file, code) => {
    const { top } = await diagnoseLog(join(SAMPLES, 'logs', file));
    expect(top?.code).toBe(code);
    expect(top?.title).not.toBe(code);
    expect(top?.fix.length).toBeGreaterThan(10);
  });

  it('a healthy log has no diagnosis', async () => {
    expect((await diagnoseLog(join(SAMPLES, 'logs', 'worker-agg-ready.log'))).top).toBeNull();
  });
});
