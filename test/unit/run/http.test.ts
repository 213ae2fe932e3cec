import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getJson, modelIdsOf, probeFrontend } from '../../../src/host/http.js';

let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/health') {
      // The real frontend may say "unhealthy" with HTTP 200: the JSON decides.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"unhealthy","message":"No endpoints available","instances":[]}');
    } else if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[{"id":"Qwen/Qwen3-0.6B","object":"model","created":1,"owned_by":"nvidia"}]}');
    } else if (req.url === '/slow') {
      setTimeout(() => res.end('{}'), 2000);
    } else {
      res.writeHead(502);
      res.end('<html>bad gateway</html>');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('getJson / probeFrontend', () => {
  it('reads the JSON body and status; keeps non-JSON bodies as text', async () => {
    expect(await getJson(`${base}/health`, 1000)).toEqual({
      url: `${base}/health`, ok: true, status: 200, error: null,
      body: { status: 'unhealthy', message: 'No endpoints available', instances: [] },
    });
    expect(await getJson(`${base}/other`, 1000)).toMatchObject({ ok: false, status: 502, body: '<html>bad gateway</html>' });
  });

  it('says why there is no answer: refused, timeout', async () => {
    const tmp = createServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
    const freePort = (tmp.address() as AddressInfo).port;
    await new Promise((r) => tmp.close(r));
    const refused = await getJson(`http://127.0.0.1:${freePort}/health`, 1000);
    expect(refused).toMatchObject({ ok: false, status: null });
    expect(refused.error).toMatch(/refused|ECONNREFUSED/);
    expect((await getJson(`${base}/slow`, 100)).error).toBe('no answer within 100 ms');
  });

  it('probeFrontend lists model ids from the OpenAI list shape', async () => {
    const fe = await probeFrontend(`${base}/`, 1000);
    expect(fe.url).toBe(base);
    expect(fe.modelIds).toEqual(['Qwen/Qwen3-0.6B']);
    expect(modelIdsOf({ data: [{ id: 'a' }, { nope: 1 }, 'x'] })).toEqual(['a']);
    expect(modelIdsOf('text')).toEqual([]);
  });
});
