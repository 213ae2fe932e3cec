import { describe, expect, it } from 'vitest';
import { choosePortBases, formatPorts } from '../../../src/plan/port-choice.js';

// up --name: each kind's range moves up as a whole past what is taken, never onto another kind's range.

const bases = { http: 8000, system: 8081, kvEvents: 20080, nixlSideChannel: 20097 };
const used = { http: [8000], system: [8081, 8082], kvEvents: [20080, 20081], nixlSideChannel: [] };

describe('choosePortBases', () => {
  it('keeps the recipe\'s ports when nothing is taken', () => {
    expect(choosePortBases(bases, used, () => false)).toEqual({ ok: true, bases });
  });
  it('moves each range past the taken ports, whole', () => {
    const taken = new Set([8000, 8001, 8081, 8082, 8084, 20081]);
    expect(choosePortBases(bases, used, (p) => taken.has(p))).toEqual({ ok: true, bases: { ...bases, http: 8002, system: 8085, kvEvents: 20082 } });
  });
  it('never gives two kinds the same port', () => {
    const b = { ...bases, http: 8081 };
    const u = { ...used, http: [8081] };
    expect(choosePortBases(b, u, () => false)).toEqual({ ok: true, bases: { ...b, system: 8082 } });
  });
  it('no room up to the limit (system ports stop at 32767): the nearest free range below the recipe\'s', () => {
    expect(choosePortBases({ ...bases, system: 32766 }, { ...used, system: [32766, 32767] }, (p) => p === 32767)).toEqual({ ok: true, bases: { ...bases, system: 32765 } });
    expect(choosePortBases({ ...bases, system: 32766 }, { ...used, system: [32766, 32767] }, (p) => p === 32767 || p === 32765)).toEqual({ ok: true, bases: { ...bases, system: 32763 } });
  });
  it('passes over the ports fetch refuses for the ports asked over HTTP (frontend, system), not for the others', () => {
    // 6000 and 6665-6669 are "bad ports": readiness could never ask a frontend or a worker there.
    const taken = (p: number) => p === 5999 || p === 6664;
    const b = { http: 5999, system: 6663, kvEvents: 5999 + 100, nixlSideChannel: 20097 };
    const u = { http: [5999], system: [6663, 6664], kvEvents: [6099], nixlSideChannel: [] };
    expect(choosePortBases(b, u, taken)).toEqual({ ok: true, bases: { ...b, http: 6001, system: 6670 } });
    // ZMQ's KV events port is no HTTP port: 6000 is fine there.
    expect(choosePortBases({ ...bases, kvEvents: 5999 }, { ...used, kvEvents: [5999, 6000] }, (p) => p === 5999)).toEqual({ ok: true, bases: { ...bases, kvEvents: 6000 } });
  });
  it('says which kind has no room anywhere from 1024 to its limit', () => {
    expect(choosePortBases({ ...bases, system: 32766 }, { ...used, system: [32766, 32767] }, (p) => p >= 1024 && p % 2 === 1)).toEqual({ ok: false, kind: 'system' });
  });
});

describe('formatPorts', () => {
  it('shows consecutive ports as a range', () => {
    expect(formatPorts({ http: [8001], system: [8083, 8084, 8090], kvEvents: [], nixlSideChannel: [] })).toBe('http 8001, system 8083-8084, 8090');
  });
});
