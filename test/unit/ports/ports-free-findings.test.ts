import { describe, expect, it } from 'vitest';
import check, { settingFor } from '../../../src/doctor/checks/ports.free.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { PortFact } from '../../../src/host/types.js';
import type { RunRecord } from '../../../src/run/types.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// ports.free as the user reads it: which port, whose, and the exact --set that moves it.
const free = (name: string, port: number): PortFact => ({ name, port, free: true, holderPid: null, holderCmd: null });
const held = (name: string, port: number, pid: number | null, cmd: string | null = null): PortFact => ({ name, port, free: false, holderPid: pid, holderCmd: cmd });
const denied = (name: string, port: number): PortFact => ({ name, port, free: false, denied: true, holderPid: null, holderCmd: null });
const run = (live: boolean, pids: number[], ports: Record<string, number>[]): RunView => ({
  record: { id: '20261130-101500-agg', processes: ports.map((p, i) => ({ name: ['frontend', 'agg-0'][i], pid: pids[i] ?? null, ports: p })) } as unknown as RunRecord,
  status: live ? 'ready' : 'stopped', live, pids, lost: [], logsDir: '/x',
});

describe('ports.free: free and our own', () => {
  it('every port free passes, listing them, with the ports as evidence', async () => {
    const ports = [free('frontend.http', 8000)];
    const r = await check.run(fakeFacts({ ports }));
    expect(r).toEqual({ status: 'pass', summary: '1 port free: 8000', details: [], fix: null, evidence: { ports, runId: null, heldBy: [] } });
  });

  it("the live run's own ports pass: which it holds (by which process) and which are free, said apart", async () => {
    const ports = [held('frontend.http', 8000, 500, 'python3 -m dynamo.frontend'), free('agg-0.system', 8081)];
    const r = await check.run(fakeFacts({ ports, run: run(true, [500], [{ http: 8000 }]) }));
    expect(r).toEqual({
      status: 'pass', summary: '1 held by run 20261130-101500-agg itself (8000 frontend.http pid 500); 1 free: 8081 agg-0.system', details: [], fix: null,
      evidence: { ports, runId: '20261130-101500-agg', heldBy: [{ port: 8000, name: 'frontend.http', pid: 500, run: '20261130-101500-agg', process: 'frontend', own: true }] },
    });
  });

  it('a run that is not live owns no port, by pid or by record', async () => {
    const ports = [held('frontend.http', 8000, 500, 'python3 -m dynamo.frontend'), held('agg-0.system', 8081, null)];
    const r = await check.run(fakeFacts({ ports, run: run(false, [500, 501], [{ http: 8000 }, { system: 8081 }]), liveRun: run(false, [500, 501], [{ http: 8000 }, { system: 8081 }]) }));
    expect(r.status).toBe('fail');
    expect(r.evidence).toMatchObject({ runId: null });
    expect(r.summary).toBe('port 8000 (frontend.http) is in use by pid 500 (python3 -m dynamo.frontend), and 1 more port(s)');
  });
});

describe('ports.free: taken by someone else', () => {
  it('several ports: the first named, the rest counted, every one listed, each setting moved once', async () => {
    const ports = [
      held('frontend.http', 8000, 1234, 'python3 -m http.server 8000'),
      held('agg-0.system', 8081, 1234, 'python3 -m http.server 8000'),
      held('agg-1.system', 8082, null),
      held('agg-0.kvEvents', 20080, 777, null),
    ];
    const recipe = recipeFrom({ ports: { system: 9000, kvEvents: 21000, nixlSideChannel: 20097 } });
    const r = await check.run(fakeFacts({ ports }, { recipe }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'port 8000 (frontend.http) is in use by pid 1234 (python3 -m http.server 8000), and 3 more port(s)',
      details: [
        'port 8000 (frontend.http) is in use by pid 1234 (python3 -m http.server 8000)',
        'port 8081 (agg-0.system) is in use by pid 1234 (python3 -m http.server 8000)',
        'port 8082 (agg-1.system) is in use by an unknown process (not readable as this user)',
        'port 20080 (agg-0.kvEvents) is in use by pid 777',
      ],
      fix: 'stop the holder (kill 1234 777, or `dynamo-dev teardown` if it is an earlier run), or move the port: --set frontend.httpPort=8001 --set ports.system=9100 --set ports.kvEvents=21100',
    });
  });

  it('the moved port never lands on another planned port (the frontend at 18655 beside system ports 18656-18657 moves to 18658)', async () => {
    const ports = [held('frontend.http', 18655, 1234, 'python3 -m http.server 18655'), free('agg-0.system', 18656), free('agg-1.system', 18657), free('agg-0.kvEvents', 18665)];
    const recipe = recipeFrom({ ports: { system: 18656, kvEvents: 18665, nixlSideChannel: 20097 } });
    const r = await check.run(fakeFacts({ ports }, { recipe }));
    expect(r.fix).toBe('stop the holder (kill 1234, or `dynamo-dev teardown` if it is an earlier run), or move the port: --set frontend.httpPort=18658');
    // A worker range moves by 100 until the whole range is clear of the others.
    const ranges = [free('frontend.http', 9100), held('agg-0.system', 9000, 1, null), free('agg-1.system', 9001), free('agg-0.kvEvents', 9101)];
    const r2 = await check.run(fakeFacts({ ports: ranges }, { recipe: recipeFrom({ ports: { system: 9000, kvEvents: 9101, nixlSideChannel: 20097 } }) }));
    expect(r2.fix).toBe('stop the holder (kill 1, or `dynamo-dev teardown` if it is an earlier run), or move the port: --set ports.system=9200');
  });

  it('a long holder command is cut to 60 characters in the verdict only', async () => {
    const cmd = `python3 -m http.server 8000 --bind 127.0.0.1 --directory /${'d'.repeat(2)}`;
    expect(cmd).toHaveLength(60);
    const exact = await check.run(fakeFacts({ ports: [held('frontend.http', 8000, 1, cmd)] }));
    expect(exact.summary).toBe(`port 8000 (frontend.http) is in use by pid 1 (${cmd})`);
    const longer = await check.run(fakeFacts({ ports: [held('frontend.http', 8000, 1, `${cmd}x`)] }));
    expect(longer.summary).toBe(`port 8000 (frontend.http) is in use by pid 1 (${cmd.slice(0, 57)}...)`);
    expect(longer.details).toEqual([`port 8000 (frontend.http) is in use by pid 1 (${cmd}x)`]);
  });

  it('an unknown holder: ss names it; a port no setting moves gets no --set', async () => {
    const r = await check.run(fakeFacts({ ports: [held('agg-0.metrics', 9400, null)] }));
    expect(r).toMatchObject({
      summary: 'port 9400 (agg-0.metrics) is in use by an unknown process (not readable as this user)',
      fix: 'stop the process holding it (`ss -ltnp` names it), or `dynamo-dev teardown` if it is an earlier run, or move the port',
    });
  });

  it("a stranger on a port recorded for the live run's process that died is not the run's", async () => {
    const r = await check.run(fakeFacts({ ports: [held('agg-0.system', 8081, null)], run: run(true, [500], [{ http: 8000 }, { system: 8081 }]) }));
    expect(r.status).toBe('fail');
  });
});

describe('ports.free: privileged ports', () => {
  it('several denied: the first named with the count of the rest, each listed, the default as the suggestion', async () => {
    const r = await check.run(fakeFacts({ ports: [denied('agg-0.kvEvents', 80), denied('frontend.http', 443), held('agg-0.system', 8081, 1)] }));
    expect(r).toMatchObject({
      status: 'fail',
      summary: 'port 80 (agg-0.kvEvents) needs root: ports below 1024 are privileged and nothing listens there, and 1 more port(s)',
      fix: 'use a port from 1024 up, e.g. --set ports.kvEvents=20080',
      details: ['port 80 (agg-0.kvEvents): binding it is not permitted (EACCES) for this user', 'port 443 (frontend.http): binding it is not permitted (EACCES) for this user'],
    });
  });

  it('a denied port no setting moves: only the rule', async () => {
    const r = await check.run(fakeFacts({ ports: [denied('agg-0.metrics', 90)] }));
    expect(r.fix).toBe('use a port from 1024 up');
  });
});

describe('settingFor', () => {
  it("only the frontend's http port maps to frontend.httpPort; worker ports map by their kind", () => {
    expect(settingFor('frontend.http')).toBe('frontend.httpPort');
    expect(settingFor('frontend.metrics')).toBeNull();
    expect(settingFor('agg-0.http')).toBeNull();
    expect(settingFor('agg-0.system')).toBe('ports.system');
  });
});
