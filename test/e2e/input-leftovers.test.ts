import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BIN, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { openTerminal, stripTerm } from '../helpers/pty.js';
import { runCliMeasured } from '../helpers/rss.js';

// Issue 26's adversarial leftovers on input through the built binary, each of which failed on
// 26ca6ab: export's YAML read otherwise by Kubernetes, a graph over the CRD's 25 components, a bound
// that named 2^53-1, an env of __proto__, an unknown recipe without a guess, a server's bidi
// controls and deep JSON, and diagnose refusing a pipe it was handed.

const homes: { cleanup: () => void }[] = [];
afterAll(() => homes.forEach((h) => h.cleanup()));
function home(python = true) {
  const h = tempHome('dd-leftover-');
  homes.push(h);
  return { ...h, env: fakeEnv(h, { python }) };
}
function recipe(dir: string, name: string, text: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}
const mocker = (body: string) => `name: t\nengine: mocker\nmodel: Qwen/Qwen3-0.6B\n${body}`;

describe('export k8s', () => {
  it('strings Kubernetes (YAML 1.1) reads as booleans, numbers or keys are quoted: values arrive unchanged', async () => {
    const h = home();
    const values = { X: 'on', Y: 'yes', Z: '1_000', T: '12:30:00', E: '=', N: 'no', K: 'kv' };
    const env = Object.entries(values).map(([k, v]) => `${k}: '${v}'`).join(', ');
    const path = recipe(h.dir, 'bools', mocker(`env: {${env}}\nworkers:\n  - role: agg\n    args: ['--note', 'off']\n`));
    const r = await runCli(['export', 'k8s', path], h.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('value: "on"');
    expect(r.stdout).toContain('value: "12:30:00"');
    expect(r.stdout).toContain('value: kv');
    for (const version of ['1.1', '1.2'] as const) {
      const doc = parseAllDocuments(r.stdout, { version })[0].toJS() as { spec: { env?: { name: string; value: unknown }[] } };
      const got = Object.fromEntries((doc.spec.env ?? []).filter((e) => e.name in values).map((e) => [e.name, e.value]));
      expect(got, version).toEqual(values);
      expect(JSON.stringify(doc), version).toContain('"--note","off"');
    }
  });

  it('a recipe over the CRD\'s 25 components: exit 2 with how to merge; exactly 25 exports', async () => {
    const h = home();
    const entries = (n: number) => `workers:\n${'  - role: agg\n    gpuMemoryUtilization: 0.01\n'.repeat(n)}`;
    const over = await runCli(['export', 'k8s', recipe(h.dir, 'many', mocker(entries(25)))], h.env);
    expect(over.code).toBe(2);
    expect(over.stdout).toBe('');
    expect(over.stderr).toBe('dynamo-dev: recipe "t" has 25 worker entries, which export as 26 components (the frontend and one per entry); a DynamoGraphDeployment holds at most 25: merge entries of the same role and settings into one with replicas: N');
    const fits = await runCli(['export', 'k8s', recipe(h.dir, 'fits', mocker(entries(24)))], h.env);
    expect(fits.code, fits.stderr).toBe(0);
  });
});

describe('recipe input', () => {
  it('replicas: 1e20 names the field\'s own limit (16), exit 2, nothing started', async () => {
    const h = home();
    const r = await runCli(['up', recipe(h.dir, 'r', mocker('workers:\n  - role: agg\n    replicas: 1e20\n'))], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`dynamo-dev: ${join(h.dir, 'r.yaml')}: workers.0.replicas: must be <= 16 (got 100000000000000000000)`);
  });

  it('env: {__proto__: ...} is refused naming it (was accepted with an empty env)', async () => {
    const h = home();
    const r = await runCli(['up', recipe(h.dir, 'p', mocker('env:\n  __proto__: {A: b}\nworkers:\n  - role: agg\n')), '--dry-run'], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/: env\.__proto__: "__proto__" is not a valid key here /);
  });

  it('an unknown recipe name suggests the nearest built-in, the one it starts, or the YAML file here', async () => {
    const h = home();
    const list = 'built-in recipes: agg, agg-router, agg-router-approx, disagg-same-gpu, mocker (or give a path to a YAML file)';
    recipe(h.dir, 'mine', mocker('workers:\n  - role: agg\n'));
    for (const [name, guess] of [['agg-rooter', 'agg-router'], ['disagg', 'disagg-same-gpu'], ['mine', './mine.yaml']]) {
      const r = await runCli(['up', name, '--dry-run'], h.env, { cwd: h.dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`dynamo-dev: unknown recipe "${name}"; did you mean "${guess}"? ${list}`);
    }
    const far = await runCli(['doctor', '--recipe', 'zzzzzzzz'], h.env, { cwd: h.dir });
    expect(far.stderr).toBe(`dynamo-dev: unknown recipe "zzzzzzzz"; ${list}`);
  });
});

describe('probe against a hostile server', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      s.close();
    }
  });
  async function serve(models: string): Promise<string> {
    const server = createServer((req, res) => {
      req.resume();
      if (req.url !== '/v1/models') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(models);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const probe = (url: string) => ['probe', '--url', url, '--prefixes', '1', '--repeats', '2', '--prefix-tokens', '10', '--timeout', '10'];

  it('bidirectional override characters in a model id are not printed', async () => {
    const h = home();
    const url = await serve(JSON.stringify({ object: 'list', data: [{ id: 'qwen\u202egnp.exe\u2066' }] }));
    const r = await runCli(probe(url), h.env);
    expect(`${r.stdout}${r.stderr}`).toContain('qwengnp.exe');
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  });

  it('6 MB of nested arrays: refused before parsing, in bounded memory (was ~380 MB)', async () => {
    const h = home();
    const depth = 3 * 1024 * 1024;
    const url = await serve(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    const r = await runCliMeasured(probe(url), h.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('/v1/models answered HTTP 200: the answer is not JSON');
    expect(r.maxRssMiB).toBeLessThan(150);
  });
});

describe('diagnose reads the pipes it is handed', () => {
  const LOG = 'INFO starting\nRuntimeError: Failed to infer device type\n';
  it('cat LOG | diagnose /dev/stdin, and diagnose <(cat LOG): the finding, located in the pipe', async () => {
    const h = home(false);
    const log = join(h.dir, 'w.log');
    writeFileSync(log, LOG);
    for (const [cmd, where] of [[`cat "$1" | "$0" "$2" diagnose /dev/stdin`, '/dev/stdin:2'], [`"$0" "$2" diagnose <(cat "$1")`, /\/dev\/fd\/\d+:2/]] as const) {
      const r = await execa('bash', ['-c', cmd, process.execPath, log, BIN], { env: h.env, extendEnv: false, reject: false, timeout: 20_000 });
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stdout).toContain('gpu.not-visible');
      expect(r.stdout).toMatch(typeof where === 'string' ? new RegExp(`first at ${where.replace('/', '\\/')}`) : where);
    }
  });

  it('diagnose /dev/stdin on a terminal says to pipe a log in, instead of waiting for typing', async () => {
    const h = home(false);
    const term = openTerminal([process.execPath, BIN, 'diagnose', '/dev/stdin'], h.env, { cols: 200, rows: 24 });
    expect(await term.exit).toBe(2);
    expect(stripTerm(term.raw()).replace(/\r/g, '')).toContain('/dev/stdin: a character device, not a log file (standard input is a terminal here: pipe a log into it, e.g. cat worker.log | dynamo-dev diagnose /dev/stdin); pass log files or folders');
  });
});
