import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FrontendHttpError,
  FrontendTimeoutError,
  FrontendUnreachableError,
  RequestAbortedError,
  errorDetailFrom,
  listModels,
  streamChat,
} from '../../../src/host/net/openai-stream.js';

// The HTTP adapter against an in-process server that streams like the frontend, with chunks cut
// mid-line and a delay before the first token.

let server: Server | null = null;
afterEach(async () => {
  if (server) await new Promise((r) => server!.close(r));
  server = null;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const FIRST = '{"choices":[{"index":0,"delta":{"content":"Hi","role":"assistant"},"finish_reason":null}],"nvext":{"worker_id":{"prefill_worker_id":7587888512394541,"prefill_dp_rank":0,"decode_worker_id":7587888512394541,"decode_dp_rank":0}}}';
const USAGE = '{"choices":[],"usage":{"prompt_tokens":300,"completion_tokens":2,"total_tokens":302,"prompt_tokens_details":{"cached_tokens":288}}}';

describe('streamChat', () => {
  it('times the first token and reads cached tokens, prompt tokens and the worker id', async () => {
    let request: Record<string, unknown> = {};
    const url = await serve((_req, res, body) => {
      request = JSON.parse(body);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': warming up\n\n'); // a comment is not a token
      setTimeout(() => {
        const text = [FIRST, '{"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"length"}]}', USAGE, '[DONE]']
          .map((d) => `data: ${d}\n\n`).join('');
        const cut = `data: ${FIRST}\n\n`.length + 30; // the first chunk whole, the next cut mid-line
        res.write(text.slice(0, cut));
        setTimeout(() => res.end(text.slice(cut)), 30);
      }, 60);
    });
    const r = await streamChat({ baseUrl: `${url}/`, model: 'm', prompt: 'hello', maxTokens: 2, timeoutMs: 5000 });
    expect(r).toMatchObject({ cachedTokens: 288, promptTokens: 300, workerId: '7587888512394541' });
    expect(r.ttftMs).toBeGreaterThanOrEqual(55);
    expect(r.totalMs).toBeGreaterThanOrEqual(r.ttftMs + 15);
    // what the frontend needs to send usage and worker ids (FACTS §4)
    expect(request).toMatchObject({ model: 'm', stream: true, max_tokens: 2, stream_options: { include_usage: true }, nvext: { extra_fields: ['worker_id'] } });
  });

  it('an HTTP error carries the status and the server\'s message', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"Model not found: m","type":"model_not_found","code":404}}');
    });
    const err = await streamChat({ baseUrl: url, model: 'm', prompt: 'x', maxTokens: 1, timeoutMs: 5000 }).catch((e) => e);
    expect(err).toBeInstanceOf(FrontendHttpError);
    expect(err.message).toMatch(/HTTP 404: Model not found: m/);
  });

  it('a stalled stream times out with a typed error', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${FIRST}\n\n`); // then nothing
    });
    const err = await streamChat({ baseUrl: url, model: 'm', prompt: 'x', maxTokens: 1, timeoutMs: 150 }).catch((e) => e);
    expect(err).toBeInstanceOf(FrontendTimeoutError);
    server!.closeAllConnections();
  });

  it('the caller\'s cancel (Ctrl-C) aborts a request in flight at once, as RequestAbortedError, not a timeout', async () => {
    let arrived!: () => void;
    const inFlight = new Promise<void>((r) => (arrived = r));
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': thinking\n\n');
      arrived(); // then nothing: only the cancel can end it
    });
    const ctl = new AbortController();
    const pending = streamChat({ baseUrl: url, model: 'm', prompt: 'x', maxTokens: 1, timeoutMs: 60_000, signal: ctl.signal }).catch((e) => e);
    await inFlight;
    ctl.abort();
    expect(await pending).toBeInstanceOf(RequestAbortedError);
    server!.closeAllConnections();
  });

  it('another web server\'s HTML error page becomes one line (its title), not the page', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(501, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE HTML>\n<html lang="en">\n  <head>\n    <title>Error response</title>\n  </head>\n  <body><h1>Error response</h1><p>Error code: 501</p></body>\n</html>\n');
    });
    const err = await streamChat({ baseUrl: url, model: 'm', prompt: 'x', maxTokens: 1, timeoutMs: 5000 }).catch((e) => e);
    expect(err).toBeInstanceOf(FrontendHttpError);
    expect(err.message).toBe(`${url}/v1/chat/completions answered HTTP 501: Error response`);
  });

  it('connection refused is a typed error with a plain reason', async () => {
    const url = await serve(() => {});
    await new Promise((r) => server!.close(r));
    server = null;
    const err = await streamChat({ baseUrl: url, model: 'm', prompt: 'x', maxTokens: 1, timeoutMs: 2000 }).catch((e) => e);
    expect(err).toBeInstanceOf(FrontendUnreachableError);
    expect(err.reason).toBe('connection refused');
    expect(err.message).toBe(`cannot reach the frontend at ${url}/v1/chat/completions: connection refused`);
  });
});

describe('listModels', () => {
  it('returns the ids of the OpenAI list', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[{"id":"Qwen/Qwen3-0.6B","object":"object","created":1,"owned_by":"nvidia"}]}');
    });
    expect(await listModels(url, 2000)).toEqual(['Qwen/Qwen3-0.6B']);
  });

  it('JSON that is not a model list is an error, not "no model listed"', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
    });
    const err = await listModels(url, 2000).catch((e) => e);
    expect(err).toBeInstanceOf(FrontendHttpError);
    expect(err.message).toBe(`${url}/v1/models answered HTTP 200: the answer is not an OpenAI model list`);
  });
});

describe('errorDetailFrom', () => {
  it('takes the OpenAI-style message, a page title, or the text on one line, at most 200 characters', () => {
    expect(errorDetailFrom('{"error":{"message":"Model not found: m"}}', 'Not Found')).toBe('Model not found: m');
    expect(errorDetailFrom('{"detail":"Not Found"}', 'Not Found')).toBe('Not Found');
    expect(errorDetailFrom('<html><body><h1>404</h1></body></html>', 'Not Found')).toBe('Not Found');
    expect(errorDetailFrom('<!doctype html><title>\n  Welcome to nginx!\n</title>', '')).toBe('Welcome to nginx!');
    expect(errorDetailFrom('line one\n  line two\r\n', 'Bad Gateway')).toBe('line one line two');
    expect(errorDetailFrom('', 'Bad Gateway')).toBe('Bad Gateway');
    const long = errorDetailFrom('x'.repeat(500), '');
    expect(long).toHaveLength(200);
    expect(long.endsWith('…')).toBe(true);
  });
});
