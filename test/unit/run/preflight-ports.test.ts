import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { freeBlock } from '../../helpers/ports.js';
import { parseRecipe } from '../../../src/recipe/load.js';
import { planRun } from '../../../src/run/plan-run.js';
import { portsStillFree } from '../../../src/run/preflight.js';
import type { UpEvent } from '../../../src/run/events.js';

// run/preflight.ts portsStillFree: `up --no-preflight` still asks whether the plan's ports are free
// (a real vLLM worker whose system port is taken goes on without /health, so the start would wait
// out its deadline): quiet when they are, a preflight event with portsOnly and a failure naming
// what --no-preflight skips when one is held. A real listener of this test holds the port.

const home = tempHomes('dd-preflight-ports-');
const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));
const python = { interpreter: 'python3', source: 'given' as const, managed: null };
const env = { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python') };

async function input(base: number) {
  const { stateDir } = home();
  const recipe = parseRecipe('name: m\nengine: mocker\nworkers:\n  - role: agg\n', 'm.yaml', [`frontend.httpPort=${base}`, `ports.system=${base + 1}`]);
  const { plan } = await planRun({ recipe, source: 'm.yaml', python, env, stateDir, dryRun: true });
  return { env, stateDir, recipe, plan, python: 'python3', model: null, json: false };
}

describe('portsStillFree (up --no-preflight)', () => {
  it('every port free: true, and nothing said', async () => {
    const base = await freeBlock(23_000, 200, 20, [0, 1]);
    const events: UpEvent[] = [];
    expect(await portsStillFree(await input(base), (e) => void events.push(e))).toBe(true);
    expect(events).toEqual([]);
  });

  it('the frontend\'s port held by another process: false, the ports-only preflight failing on ports.free, and a failure saying --no-preflight never skips it', async () => {
    const base = await freeBlock(23_000, 200, 20, [0, 1]);
    const srv = createServer();
    servers.push(srv);
    await new Promise<void>((r) => srv.listen(base, '0.0.0.0', r));
    const events: UpEvent[] = [];
    expect(await portsStillFree(await input(base), (e) => void events.push(e))).toBe(false);
    expect(events.map((e) => e.event)).toEqual(['preflight', 'failed']);
    expect(events[0]).toMatchObject({ event: 'preflight', ok: false, portsOnly: true, checks: [{ id: 'ports.free', status: 'fail' }] });
    expect(JSON.stringify(events[0])).toContain(String(base));
    expect(events[1]).toMatchObject({
      event: 'failed', process: null,
      reason: 'preflight: ports.free failed (--no-preflight skips doctor\'s checks, never the ports of the plan); nothing was started',
    });
  });
});
