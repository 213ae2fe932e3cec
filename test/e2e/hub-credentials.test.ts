import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { fakeEnv, runCli, tempHomes } from '../helpers/cli.js';

// HF_ENDPOINT with user:password@ (a mirror behind basic auth): the credentials are sent as
// huggingface_hub sends them (requests turns a URL's user:password into HTTP Basic auth) and never
// printed. Before: fetch refused the URL, the hub was "unreachable" and the password was printed,
// so up refused a hub its workers could reach. A hub answering 400 is not "available".

const newHome = tempHomes('dd-hub-cred-');
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

/** A hub that answers 200 to HEAD /api/models/... only with Basic user:s3cret, else `otherwise`. */
async function hub(otherwise = 401): Promise<{ port: number; auth: (string | undefined)[] }> {
  const auth: (string | undefined)[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    auth.push(req.headers.authorization);
    res.writeHead(req.headers.authorization === `Basic ${Buffer.from('user:s3cret').toString('base64')}` ? 200 : otherwise);
    res.end();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as { port: number }).port, auth };
}

describe('a hub behind basic auth named by HF_ENDPOINT=http://user:password@host', () => {
  it('doctor: the hub has it (pass), asked with Basic credentials; no command prints the password, --json included', async () => {
    const srv = await hub();
    const h = newHome();
    const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { HF_ENDPOINT: `http://user:s3cret@127.0.0.1:${srv.port}` } });
    const r = await runCli(['doctor', '--only', 'model.available', '--json'], env);
    expect(r.code, r.stdout).toBe(0);
    const c = JSON.parse(r.stdout).checks[0];
    expect(c.status).toBe('pass');
    expect(c.summary).toContain(`the hub has it (http://***@127.0.0.1:${srv.port})`);
    expect(srv.auth).toEqual([`Basic ${Buffer.from('user:s3cret').toString('base64')}`]);
    for (const args of [['doctor'], ['doctor', '--json'], ['up', 'agg', '--dry-run'], ['up', 'agg', '--dry-run', '--json']]) {
      const out = await runCli(args, env);
      expect([args, `${out.stdout}${out.stderr}`.includes('s3cret')]).toEqual([args, false]);
    }
  });

  it('a wrong password: the hub\'s 401 is said (private or gated), the password still never printed', async () => {
    const srv = await hub();
    const h = newHome();
    const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { HF_ENDPOINT: `http://user:wrong@127.0.0.1:${srv.port}` } });
    const r = await runCli(['doctor', '--only', 'model.available', '--json'], env);
    const c = JSON.parse(r.stdout).checks[0];
    expect(c.summary).toMatch(/the hub answers 401/);
    expect(r.stdout + r.stderr).not.toContain('wrong');
  });
});

it('a hub answering 400 is not "available": a warning that says the answer', async () => {
  const srv = await hub(400);
  const h = newHome();
  const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { HF_ENDPOINT: `http://127.0.0.1:${srv.port}` } });
  const r = await runCli(['doctor', '--only', 'model.available', '--json'], env);
  const c = JSON.parse(r.stdout).checks[0];
  expect(c.status).not.toBe('pass');
  expect(c.summary).toContain('the hub answered 400');
});
