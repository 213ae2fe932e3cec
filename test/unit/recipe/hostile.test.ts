import { describe, expect, it } from 'vitest';
import { applySet, MAX_RECIPE_BYTES, parseRecipe } from '../../../src/recipe/load.js';
import { editDistance, fieldsAt, nearest } from '../../../src/recipe/suggest.js';
import { recipeSchema } from '../../../src/recipe/schema.js';
import { buildPlan } from '../../../src/plan/build.js';
import { recipeError } from '../../helpers/recipe-errors.js';

// Issue 12 causes 1 and 8: crafted recipes and --set values are input errors naming the field
// (exit 2), never a crash, a silently ignored value or something that runs.

const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

function errorOf(text: string, sets: string[] = []): string {
  const msg = recipeError(text, sets);
  expect(msg).not.toMatch(/[\u0000-\u001f]/); // one printable line, whatever the input held
  return msg;
}

describe('names, models, env keys, control characters', () => {
  it('a recipe name fit for a run id and a folder', () => {
    for (const bad of ['a b', 'a/b', '../x', '-x', '', 'x'.repeat(65), 'a\nb', 'é']) {
      expect(errorOf(`${minimal}`.replace('name: t', `name: ${JSON.stringify(bad)}`))).toMatch(/^my\.yaml: name: must be 1-64 letters/);
    }
    expect(parseRecipe(minimal.replace('name: t', 'name: My_recipe-2.b'), 'my.yaml').name).toBe('My_recipe-2.b');
  });

  it('a model is a Hugging Face id or a path, never an option or control characters', () => {
    const model = (m: string) => parseRecipe(`${minimal}model: ${JSON.stringify(m)}\n`, 'my.yaml').model;
    for (const ok of ['Qwen/Qwen3-0.6B', 'gpt2', '/tmp/dyn-probe/model', './models/q', '~/m', 'a/b/c', '/with space/m']) expect(model(ok)).toBe(ok);
    expect(errorOf(`${minimal}model: "--trust-remote-code"\n`)).toMatch(/model: must not start with "-"/);
    expect(errorOf(`${minimal}model: "qwen model"\n`)).toMatch(/model: must be a Hugging Face model id \(org\/name\) or a path/);
    expect(errorOf(`${minimal}model: "org/m\\u0000x"\n`)).toMatch(/model: must not contain control characters .*\(got "org\/m\\u0000x"\)/);
    expect(errorOf(`${minimal}model: "org/\\u009b31m"\n`)).toMatch(/model: must not contain control characters/);
  });

  it('env keys are shell names in every env map; values have no control characters', () => {
    expect(errorOf(`${minimal}env: {"X=1": a}\n`)).toBe('my.yaml: env: "X=1" is not an environment variable name; use letters, digits and "_", not starting with a digit');
    expect(errorOf(`${minimal}frontend: {env: {"1X": a}}\n`)).toMatch(/^my\.yaml: frontend\.env: "1X" is not an environment variable name/);
    expect(errorOf(`${minimal}    env: {"A-B": a}\n`)).toMatch(/^my\.yaml: workers\.0\.env: "A-B" is not/);
    expect(errorOf(`${minimal}env: {X: "a\\nb"}\n`)).toMatch(/^my\.yaml: env\.X: must be a value without control characters/);
    expect(parseRecipe(`${minimal}env: {_X1: 3, Y: true}\n`, 'my.yaml').env).toEqual({ _X1: '3', Y: 'true' });
  });

  it('arguments, python and router mode: no NUL, no control characters, no option as a program', () => {
    expect(errorOf(`${minimal}    args: ["ok", "a\\u0000b"]\n`)).toMatch(/^my\.yaml: workers\.0\.args\.1: must be an argument without control characters/);
    expect(errorOf(`${minimal}frontend: {args: ["\\t"]}\n`)).toMatch(/frontend\.args\.0: must be an argument without control characters/);
    expect(errorOf(`${minimal}python: "-c"\n`)).toMatch(/python: must not start with "-"/);
    expect(errorOf(`${minimal}frontend: {routerMode: "kv; rm -rf /"}\n`)).toMatch(/frontend\.routerMode: must be a router mode/);
  });

  it('a key with control characters is shown escaped, not printed raw', () => {
    expect(errorOf(`${minimal}"a\\u001b[2Jb": 1\n`)).toMatch(/unknown field "a\\u001b\[2Jb"/);
  });
});

describe('unknown fields: the nearest valid name, ahead of a missing required field', () => {
  it('names the typo and the field it stands for', () => {
    expect(errorOf('name: t\nworkerz:\n  - role: agg\n')).toBe('my.yaml: unknown field "workerz"; did you mean "workers"?');
    expect(errorOf(`${minimal}frontend: {routermode: kv}\n`)).toBe('my.yaml: unknown field "frontend.routermode"; did you mean "frontend.routerMode"?');
    expect(errorOf(`${minimal}ports: {sytem: 9000}\n`)).toBe('my.yaml: unknown field "ports.sytem"; did you mean "ports.system"?');
    expect(errorOf(`${minimal}zzzzzz: 1\n`)).toMatch(/unknown field "zzzzzz"; valid here: name, description, engine, device, model, python, gpu/);
  });
  it('the field list follows the schema (defaults and lists stepped into)', () => {
    expect(fieldsAt(recipeSchema, ['workers', 0])).toEqual(['role', 'replicas', 'gpuMemoryUtilization', 'args', 'env']);
    expect(fieldsAt(recipeSchema, ['memory'])).toEqual(['limit']);
    expect(fieldsAt(recipeSchema, ['name'])).toEqual([]);
    expect(editDistance('wokrers', 'workers')).toBe(1);
    expect(nearest('colour', ['name', 'workers'])).toBeNull();
  });
});

describe('--set list indexes are bounded', () => {
  it('an index past the next free slot, negative or not a number is an error naming the list; the next slot adds an entry', () => {
    const t0 = performance.now();
    expect(errorOf(minimal, ['workers.999999999.role=agg'])).toBe('--set workers.999999999.role=agg: workers has 1 entry; index 999999999 is past the end (use 0 to 1)');
    expect(performance.now() - t0).toBeLessThan(100); // no billion-entry list was built
    expect(errorOf(minimal, ['workers.-1.role=agg'])).toBe('--set workers.-1.role=agg: workers is a list; "-1" is not an index (0 to 1)');
    expect(errorOf(minimal, ['workers.x=1'])).toMatch(/workers is a list; "x" is not an index/);
    expect(errorOf(minimal, ['workers.0.args.5=x'])).toMatch(/workers\.0\.args has 0 entries; index 5 is past the end \(use 0 to 0\)/);
    expect(parseRecipe(minimal, 'my.yaml', ['workers.1.role=agg', 'workers.1.gpuMemoryUtilization=0.3']).workers).toHaveLength(2);
    expect(() => applySet({ a: [] }, `a.${'9'.repeat(400)}=1`)).toThrow(/past the end/);
  });
});

describe('size and alias limits are input errors naming the file', () => {
  it('a recipe over 1 MiB', () => {
    expect(errorOf(`${minimal}# ${'x'.repeat(MAX_RECIPE_BYTES)}\n`)).toMatch(/^my\.yaml: 1\.0 MiB is too large for a recipe \(at most 1\.0 MiB\)$/);
  });
  it('a "billion laughs" alias bomb', () => {
    let t = 'name: t\nworkers: [{role: agg}]\nl0: &l0 [x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 10; i++) t += `l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]\n`;
    const t0 = performance.now();
    expect(errorOf(t)).toBe('my.yaml: invalid YAML: its aliases (*name) expand too far (an anchored value and its aliases may appear at most 100 times in all, an alias inside that value counting as often as its own anchor appears); write the values out');
    expect(performance.now() - t0).toBeLessThan(1000);
  });
  it('absurd nesting (the YAML parser would run out of memory and abort the process) is refused before parsing, fast', () => {
    const t0 = performance.now();
    const half = MAX_RECIPE_BYTES / 2;
    expect(errorOf(`${'['.repeat(half)}${']'.repeat(half)}`)).toBe('my.yaml: invalid YAML: nested deeper than 64 levels; a recipe nests a few');
    expect(errorOf(`a: it's\n${'{a: '.repeat(100_000)}`)).toMatch(/nested deeper than 64 levels/);
    expect(errorOf('- '.repeat(half))).toMatch(/nested deeper than 64 levels/);
    let block = '';
    for (let i = 0; i < 1400; i++) block += `${' '.repeat(i)}a:\n`;
    expect(errorOf(block)).toMatch(/indented more than 512 spaces/);
    expect(performance.now() - t0).toBeLessThan(1000);
    // Brackets inside quotes and comments are text, not nesting.
    expect(parseRecipe(`${minimal}description: '${'['.repeat(200)}'\n# ${'{'.repeat(200)}\n`, 'my.yaml').description).toBe('['.repeat(200));
  });
});

describe('numbers within their real range', () => {
  const plan = (sets: string[]) => buildPlan({ recipe: parseRecipe(minimal, 'my.yaml', sets), runDir: '/r', source: 'my.yaml' });
  it('worker port ranges stay <= 65535 after replicas', () => {
    // System ports stop earlier: Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number.
    expect(() => plan(['ports.system=32767', 'workers.0.replicas=2'])).toThrow(
      'my.yaml: ports.system: 2 workers take system ports 32767-32768, past 32767; Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number, so set ports.system to at most 32766',
    );
    expect(() => plan(['ports.nixlSideChannel=65535', 'workers.0.role=prefill', 'workers.1={role: decode}'])).toThrow(
      'my.yaml: ports.nixlSideChannel: 2 workers count up from 65535 to 65536 (decode-0), past the last port 65535; set ports.nixlSideChannel to at most 65534',
    );
    expect(() => plan(['ports.kvEvents=65535', 'workers.0.replicas=3', 'workers.0.gpuMemoryUtilization=auto', 'frontend.routerMode=kv'])).toThrow(/ports\.kvEvents: 3 workers count up from 65535 to 65536 \(agg-1\)/);
    expect(plan(['ports.system=32766', 'workers.0.replicas=2']).processes.at(-1)!.ports.system).toBe(32767);
  });
  it('ports readiness asks over HTTP are never ones fetch refuses (6000, 10080, 5060-5061, ...): the fix moves the whole range', () => {
    expect(() => plan(['frontend.httpPort=6000'])).toThrow(
      'my.yaml: frontend.httpPort: port 6000 is one fetch refuses to connect to (the WHATWG "bad ports", refused by Node and browsers alike), so dynamo-dev could never see frontend ready; set frontend.httpPort to another, e.g. 6001',
    );
    // Three workers from 5059: agg-2 would sit on 5061; 5060 and 5061 would keep two of them there.
    expect(() => plan(['ports.system=5059', 'workers.0.replicas=3', 'workers.0.gpuMemoryUtilization=0.25'])).toThrow(
      "my.yaml: ports.system: port 5060 (agg-1's: the workers count up from 5059) is one fetch refuses to connect to (the WHATWG \"bad ports\", refused by Node and browsers alike), so dynamo-dev could never see agg-1 ready; set ports.system to another, e.g. 5062",
    );
    // The boundary: the ports beside a refused one are fine, and so is a refused one for ZMQ (KV events).
    expect(plan(['frontend.httpPort=10081', 'ports.system=5062', 'ports.kvEvents=6000', 'frontend.routerMode=kv']).processes.map((p) => p.ports)).toEqual([{ http: 10081 }, { system: 5062, kvEvents: 6000 }]);
    expect(plan(['frontend.httpPort=5999']).processes[0].ports).toEqual({ http: 5999 });
  });
  it('infinite or out-of-range numbers', () => {
    expect(errorOf(`${minimal}maxModelLen: .inf\n`)).toMatch(/^my\.yaml: maxModelLen: /);
    expect(errorOf(`${minimal}gpu: 100000\n`)).toMatch(/^my\.yaml: gpu: must be <= 255/);
    expect(errorOf(`${minimal}frontend: {httpPort: 65536}\n`)).toMatch(/frontend\.httpPort: must be <= 65535/);
  });
});
