import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getJson, modelIdsOf, modelReadinessOf, postJson, probeFrontend, workerInstancesOf } from '../../../src/host/net/http.js';
import { SAMPLES } from '../../helpers/cli.js';

const real = (name: string): unknown => JSON.parse(readFileSync(join(SAMPLES, 'http', name), 'utf8'));

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
    } else if (req.url === '/v1/chat/completions' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ echo: JSON.parse(body), type: req.headers['content-type'] }));
      });
    } else if (req.url === '/v1/models/Qwen%2FQwen3-0.6B/ready') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(real('frontend-model-ready-1.6.1.json')));
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

describe('what the frontend counts (real 1.6.1 answers)', () => {
  it('/health: one worker per generate instance; its KV query endpoint is not a worker; none when empty', () => {
    // The 64-bit id loses its last digits to JSON's doubles: ids are shown, never compared.
    expect(workerInstancesOf(real('frontend-health-1.6.1.json'))).toEqual([{ id: expect.stringMatching(/^173206581674363\d{5}$/), component: 'backend' }]);
    expect(workerInstancesOf(real('frontend-health-empty-1.6.1.json'))).toEqual([]);
    expect(workerInstancesOf({ status: 'unhealthy', message: 'No endpoints available' })).toEqual([]);
    expect(workerInstancesOf('text')).toEqual([]);
  });

  it('/v1/models/<model>/ready: ready and the workers per worker type', () => {
    expect(modelReadinessOf(real('frontend-model-ready-1.6.1.json'))).toEqual({ ready: true, workers: 1, byType: { aggregated: 1 } });
    expect(modelReadinessOf({ message: 'Model not found', type: 'Not Found', code: 404 })).toBeNull();
    const disagg = { ready: true, namespaces: { dynamo: { worker_types: { prefill: { workers: 1 }, decode: { workers: 2 } } } } };
    expect(modelReadinessOf(disagg)).toEqual({ ready: true, workers: 3, byType: { prefill: 1, decode: 2 } });
  });

  it('probeFrontend asks /ready for a model whose id fits a URL path, not for a local folder', async () => {
    const fe = await probeFrontend(base, 1000, 'Qwen/Qwen3-0.6B');
    expect(fe.modelReady).toMatchObject({ ok: true, status: 200 });
    expect((await probeFrontend(base, 1000, '/models/tiny')).modelReady).toBeNull();
  });

  it('postJson sends a JSON body and reads the JSON answer', async () => {
    const r = await postJson(`${base}/v1/chat/completions`, { model: 'm', max_tokens: 1 }, 1000);
    expect(r).toMatchObject({ ok: true, status: 200, body: { echo: { model: 'm', max_tokens: 1 }, type: 'application/json' } });
  });
});
