import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { curlLine, formatNdjson, NDJSON_EVENTS, type UpEvent } from '../../../src/run/events.js';

// `up --json` (CLI.md): exactly these events are in the stream, each with its name; the view-only
// ones never are; the curl line survives a model name with a quote in it.

const at = new Date('2026-12-01T10:00:00Z');

describe('the NDJSON stream of up --json', () => {
  it('every stream event is written, named first; the set is exactly CLI.md\'s', () => {
    const names = ['plan', 'preflight', 'starting', 'log-ready', 'hint', 'ready', 'exited', 'failed', 'stopping', 'stopped'];
    expect([...NDJSON_EVENTS].sort()).toEqual([...names].sort());
    for (const event of names) {
      const line = formatNdjson({ event } as UpEvent, at);
      expect(line).toBe(`{"event":"${event}","ts":"2026-12-01T10:00:00.000Z"}\n`);
    }
  });

  it('the view-only events never are', () => {
    for (const event of ['state', 'line', 'preflight-progress', 'run', 'stop-progress']) expect(formatNdjson({ event } as UpEvent, at)).toBeNull();
  });
});

describe('the curl line', () => {
  it('a model name with a single quote is still one shell word (the body parses back to the model)', () => {
    const line = curlLine('http://h:8000', "o'brien/model");
    const r = spawnSync('bash', ['-c', `set -- ${line.replace(/^curl /, '')}; printf '%s' "$6"`], { encoding: 'utf8' });
    expect(JSON.parse(r.stdout)).toEqual({ model: "o'brien/model", messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 32 });
  });
});
