import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { applySet, parseRecipe } from '../../../src/recipe/load.js';
import { recipeError } from '../../helpers/recipe-errors.js';
import { builtinRecipeDir } from '../../../src/host/files/recipes.js';

const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

const errorOf = recipeError;

describe('parseRecipe', () => {
  it('fills the documented defaults', () => {
    const r = parseRecipe(minimal, 'my.yaml');
    expect(r).toMatchObject({
      engine: 'vllm', model: 'Qwen/Qwen3-0.6B', python: 'python3', gpu: 0, maxModelLen: 4096, enforceEager: true,
      discovery: 'file', memory: { limit: 0.9 }, startup: 'sequential',
      frontend: { httpPort: 8000, routerMode: 'round-robin', kvEvents: true },
      ports: { system: 8081, kvEvents: 20080, nixlSideChannel: 20097 },
    });
    expect(r.workers[0]).toMatchObject({ role: 'agg', replicas: 1, gpuMemoryUtilization: 0.38 });
  });

  it('names an unknown field with its path and the nearest valid name', () => {
    expect(errorOf(`${minimal}    gpuMemoryUtilisation: 0.4\n`)).toBe(
      'my.yaml: unknown field "workers.0.gpuMemoryUtilisation"; did you mean "workers.0.gpuMemoryUtilization"?',
    );
    expect(errorOf(`${minimal}colour: red\n`)).toMatch(/^my\.yaml: unknown field "colour"; valid here: name, description, engine, device, model, .*workers/);
  });

  it('names the unknown field even when a required field is missing too (a typo of it)', () => {
    expect(errorOf('name: t\nworkerz:\n  - role: agg\n')).toBe('my.yaml: unknown field "workerz"; did you mean "workers"?');
    expect(errorOf('name: t\nworkers:\n  - rol: agg\n')).toBe('my.yaml: unknown field "workers.0.rol"; did you mean "workers.0.role"?');
  });

  it('names a fraction out of range with the valid range', () => {
    expect(errorOf(minimal.replace('0.38', '1.7'))).toBe('my.yaml: workers.0.gpuMemoryUtilization: must be a fraction in (0, 1] or "auto" (got 1.7)');
    expect(errorOf(minimal.replace('0.38', '0'))).toMatch(/workers\.0\.gpuMemoryUtilization: must be a fraction in \(0, 1\]/);
  });

  it('names a bad enum value with the choices', () => {
    expect(errorOf(`${minimal}engine: trt\n`)).toBe('my.yaml: engine: must be one of "vllm", "mocker" (got "trt")');
  });

  it('refuses discovery "mem" with the reason, and names the backends that work', () => {
    expect(errorOf(`${minimal}discovery: mem\n`)).toBe(
      'my.yaml: discovery: "mem" cannot work: the "mem" backend keeps registrations inside one process, and up starts the frontend and each ' +
        'worker as separate processes that would never see each other; use "file" (the default) or "etcd"',
    );
    expect(errorOf(`${minimal}discovery: nats\n`)).toBe('my.yaml: discovery: must be one of "file", "etcd" (got "nats")');
  });

  it('refuses a system port above 32767 (Dynamo parses it as a signed 16-bit number)', () => {
    expect(errorOf(`${minimal}ports: { system: 40000 }\n`)).toBe(
      'my.yaml: ports.system: must be <= 32767: Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number (got 40000)',
    );
    expect(parseRecipe(`${minimal}ports: { system: 32767 }\n`, 'my.yaml').ports.system).toBe(32767);
  });

  it('reports invalid YAML with its line', () => {
    expect(errorOf('name: t\nworkers: [\n')).toMatch(/^my\.yaml:\d+: invalid YAML/);
  });

  it('requires workers', () => {
    expect(errorOf('name: t\n')).toBe('my.yaml: workers: is required (array)');
  });

  it('applies --set overrides before validation', () => {
    const r = parseRecipe(minimal, 'my.yaml', ['workers.0.gpuMemoryUtilization=0.4', 'frontend.routerMode=kv', 'maxModelLen=2048']);
    expect(r.workers[0].gpuMemoryUtilization).toBe(0.4);
    expect(r.frontend.routerMode).toBe('kv');
    expect(r.maxModelLen).toBe(2048);
    expect(errorOf(minimal, ['workers.0.gpuMemoryUtilization=1.5'])).toMatch(/workers\.0\.gpuMemoryUtilization: must be a fraction/);
  });

  it('rejects malformed --set', () => {
    expect(() => applySet({}, 'novalue')).toThrow(/expected PATH=VALUE/);
    expect(() => applySet({}, '__proto__.x=1')).toThrow(/not a valid field path/);
  });

  it('accepts every built-in recipe', () => {
    for (const f of readdirSync(builtinRecipeDir)) {
      const r = parseRecipe(readFileSync(join(builtinRecipeDir, f), 'utf8'), f);
      expect(r.name).toBe(f.replace('.yaml', ''));
      expect(r.description.length).toBeGreaterThan(10);
    }
  });
});
