import { describe, expect, it } from 'vitest';
import { parseRunRecord } from '../../../src/run/record-schema.js';

// What a run.json may say (record-schema.ts): every role, process state and run state up writes
// is read back; a name that is not a process name, an id that is not a run id, a diagnosis that is
// not one and a document that is not a record are refused naming the field and why.

const logOf = (name: string) => `/state/runs/r1/logs/${name}.log`;

function proc(over: Record<string, unknown> = {}) {
  return {
    name: 'agg-0', role: 'agg', pid: 4242, pgid: 4242, startTicks: 100, startedAt: '2026-12-01T10:00:00Z',
    argv: ['python3', '-m', 'dynamo.vllm'], env: {}, ports: { system: 8081 }, gpuMemoryUtilization: 0.38,
    state: 'ready', kvTokens: 14816, exitCode: null, signal: null, log: '/elsewhere/agg-0.log', descendants: [],
    ...over,
  };
}

function record(over: Record<string, unknown> = {}, processes: unknown[] = [proc()]) {
  return JSON.stringify({
    id: 'r1', recipe: 'agg', model: 'Qwen/Qwen3-0.6B', createdAt: '2026-12-01T10:00:00Z', updatedAt: '2026-12-01T10:00:00Z',
    supervisor: { pid: 4000, startTicks: 50, detached: false }, state: 'ready', frontendUrl: 'http://127.0.0.1:8000',
    plan: {}, processes, ...over,
  });
}

const reasonOf = (text: string, dirId = 'r1') => {
  const r = parseRunRecord(text, dirId, logOf);
  return r.ok ? null : r.reason;
};

describe('read back as written', () => {
  it('every process role', () => {
    const roles = ['frontend', 'agg', 'prefill', 'decode'];
    const r = parseRunRecord(record({}, roles.map((role, i) => proc({ name: `p-${i}`, role }))), 'r1', logOf);
    expect(r.ok && r.record.processes.map((p) => p.role)).toEqual(roles);
  });

  it('every process state', () => {
    const states = ['waiting', 'starting', 'loading', 'kv-allocated', 'ready', 'exited', 'failed', 'stopped', 'gone'];
    const r = parseRunRecord(record({}, states.map((state, i) => proc({ name: `p-${i}`, state }))), 'r1', logOf);
    expect(r.ok && r.record.processes.map((p) => p.state)).toEqual(states);
  });

  it('every run state', () => {
    for (const state of ['starting', 'ready', 'degraded', 'stopping', 'stopped', 'failed']) {
      const r = parseRunRecord(record({ state }), 'r1', logOf);
      expect(r.ok && r.record.state).toBe(state);
    }
  });

  it("a process's log is where the reader's state directory keeps it, whatever the record says", () => {
    const r = parseRunRecord(record(), 'r1', logOf);
    expect(r.ok && r.record.processes[0].log).toBe('/state/runs/r1/logs/agg-0.log');
  });
});

describe('refused, naming the field', () => {
  it('a process name with a path or a space after a good start (it names the log file read)', () => {
    for (const name of ['agg-0/../../../etc/passwd', 'agg-0 ', 'agg-0\n']) {
      expect(reasonOf(record({}, [proc({ name })]))).toBe('processes.0.name: is not a process name');
    }
  });

  it('a run id with a character ids never have, at the start, the end or inside', () => {
    for (const id of ['r 1', ' r1', 'r1 ', 'r1/x']) {
      expect(reasonOf(record({ id }), id)).toBe('id: is not a run id');
    }
  });

  it('a diagnosis without its line number, or with one that is not whole', () => {
    const diagnosis = { code: 'cuda-oom', title: 'CUDA out of memory', text: 'x', file: '/l.log' };
    expect(reasonOf(record({}, [proc({ diagnosis })]))).toMatch(/^processes\.0\.diagnosis\.line: /);
    expect(reasonOf(record({}, [proc({ diagnosis: { ...diagnosis, line: 1.5 } })]))).toMatch(/^processes\.0\.diagnosis\.line: /);
    expect(reasonOf(record({}, [proc({ diagnosis: { ...diagnosis, line: 12 } })]))).toBeNull();
  });

  it('a document that is not an object: the record itself is named', () => {
    for (const text of ['[]', '42', 'null', '"r1"']) {
      expect(reasonOf(text)).toMatch(/^the record: \S/);
    }
  });

  it('text that is not JSON: what is wrong, never the text itself (a run.json may be someone\'s secret file: issue 29)', () => {
    expect(reasonOf('{"id":')).toBe('not JSON (it ends early)');
    expect(reasonOf('password=hunter2')).toBe('not JSON (invalid from the first bytes)');
    expect(reasonOf('{"id": "password=hunter2" x')).toMatch(/^not JSON \([^"]*position 26/);
  });
});
