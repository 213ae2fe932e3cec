import { describe, expect, it } from 'vitest';
import check, { settingFor } from '../../../src/doctor/checks/ports.free.js';
import type { RunView } from '../../../src/doctor/types.js';
import type { PortFact } from '../../../src/host/types.js';
import type { RunRecord } from '../../../src/run/types.js';
import { fakeFacts } from '../../helpers/facts.js';

const free = (name: string, port: number): PortFact => ({ name, port, free: true, holderPid: null, holderCmd: null });
const held = (name: string, port: number, pid: number | null, cmd: string | null = null): PortFact => ({ name, port, free: false, holderPid: pid, holderCmd: cmd });
const live = (pids: number[], ports: Record<string, number>[] = []): RunView => ({
  // Process i was started as pids[i] (alive when listed in pids).
  record: { id: '20261130-101500-agg', processes: ports.map((p, i) => ({ pid: pids[i] ?? 90000 + i, ports: p })) } as unknown as RunRecord,
  status: 'ready', live: true, pids, lost: [], logsDir: '/x',
});

describe('ports.free', () => {
  it('passes when every port is free', async () => {
    const r = await check.run(fakeFacts({ ports: [free('frontend.http', 8000), free('agg-0.system', 8081)] }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('2 ports free: 8000, 8081');
  });

  it('fails naming the port, its plan name and the holder; fix stops it or moves the port', async () => {
    const r = await check.run(fakeFacts({ ports: [held('frontend.http', 8000, 1234, 'python3 -m http.server 8000'), free('agg-0.system', 8081)] }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('port 8000 (frontend.http) is in use by pid 1234 (python3 -m http.server 8000)');
    expect(r.fix).toContain('kill 1234');
    expect(r.fix).toContain('dynamo-dev teardown');
    expect(r.fix).toContain('--set frontend.httpPort=8001');
  });

  it('a privileged port this user may not bind is "needs root", not "in use" (nothing listens there)', async () => {
    const denied: PortFact = { name: 'frontend.http', port: 80, free: false, denied: true, holderPid: null, holderCmd: null };
    const r = await check.run(fakeFacts({ ports: [denied, free('agg-0.system', 8081)] }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('port 80 (frontend.http) needs root: ports below 1024 are privileged and nothing listens there');
    expect(r.fix).toBe('use a port from 1024 up, e.g. --set frontend.httpPort=8000');
    expect(r.details).toEqual(['port 80 (frontend.http): binding it is not permitted (EACCES) for this user']);
  });

  it('moves a worker port range from the recipe\'s first port', async () => {
    const r = await check.run(fakeFacts({ ports: [free('frontend.http', 8000), held('agg-0.system', 8081, null)] }));
    expect(r.status).toBe('fail');
    expect(r.summary).toContain('an unknown process');
    expect(r.fix).toContain('--set ports.system=8181');
    expect(r.fix).toContain('ss -ltnp');
  });

  it('passes when the live run itself holds its ports (by pid, or recorded in its plan when the holder is unreadable)', async () => {
    const r = await check.run(fakeFacts({
      ports: [held('frontend.http', 8000, 500, 'python3 -m dynamo.frontend'), held('agg-0.system', 8081, null)],
      run: live([500, 501], [{ http: 8000 }, { system: 8081 }]),
    }));
    expect(r.status).toBe('pass');
    expect(r.summary).toBe('all 2 held by run 20261130-101500-agg itself: 8000 frontend.http pid 500, 8081 agg-0.system pid 501');
  });

  it("does not credit the run with an unreadable holder of a port whose process of the run has died", async () => {
    // The worker (pid 501) is gone; the frontend keeps the run live; 8081 is now held by someone we cannot see.
    const r = await check.run(fakeFacts({
      ports: [held('frontend.http', 8000, 500, 'python3 -m dynamo.frontend'), held('agg-0.system', 8081, null)],
      run: live([500], [{ http: 8000 }, { system: 8081 }]),
    }));
    expect(r.status).toBe('fail');
    expect(r.summary).toBe('port 8081 (agg-0.system) is in use by an unknown process (not readable as this user)');
  });

  it('fails when a stranger holds a port while our run is live', async () => {
    const r = await check.run(fakeFacts({ ports: [held('frontend.http', 8000, 999, 'nginx')], run: live([500], [{ http: 8000 }]) }));
    expect(r.status).toBe('fail');
  });

  it('maps plan names to recipe settings', () => {
    expect(settingFor('frontend.http')).toBe('frontend.httpPort');
    expect(settingFor('prefill-0.nixlSideChannel')).toBe('ports.nixlSideChannel');
    expect(settingFor('agg-1.kvEvents')).toBe('ports.kvEvents');
    expect(settingFor('x.other')).toBeNull();
  });
});
