import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// What a user reads for a recipe file that is not a recipe: one line naming the file (and line),
// the field, and what would be valid.
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';

describe('a file that is not a mapping', () => {
  it.each([
    ['', 'nothing'],
    ['# only a comment\n', 'nothing'],
    ['- a\n- b\n', 'a list'],
    ['hello\n', 'string'],
    ['42\n', 'number'],
  ])('%j: says what it got instead', (text, got) => {
    expect(errorOf(text)).toBe(`my.yaml: a recipe is a YAML mapping (name:, workers:, ...), got ${got}`);
  });
});

describe('invalid YAML', () => {
  it('the line it is on, the parser\'s reason, without the parser\'s own "at line, column" tail', () => {
    expect(errorOf('name: t\nworkers: [\n')).toBe('my.yaml:3: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]');
    expect(errorOf('name: t\nname: u\n')).toBe('my.yaml:2: invalid YAML: Map keys must be unique');
    expect(errorOf('name: t\n  bad: indent\n')).toBe('my.yaml:1: invalid YAML: Nested mappings are not allowed in compact mappings');
  });
});

describe('the value shown in a message', () => {
  it('up to 80 characters (with its quotes) whole, longer cut with an ellipsis', () => {
    expect(errorOf(`${minimal}engine: ${'x'.repeat(78)}\n`)).toBe(`my.yaml: engine: must be one of "vllm", "mocker" (got "${'x'.repeat(78)}")`);
    expect(errorOf(`${minimal}engine: ${'x'.repeat(79)}\n`)).toBe(`my.yaml: engine: must be one of "vllm", "mocker" (got "${'x'.repeat(78)}…)`);
  });
});

describe('numbers out of range name the bound', () => {
  it.each([
    ['maxModelLen: 8', 'maxModelLen: must be >= 16 (got 8)'],
    ['maxModelLen: 99999999', 'maxModelLen: must be <= 16777216 (got 99999999)'],
    ['memory: {limit: 0}', 'memory.limit: must be > 0 (got 0)'],
    ['memory: {limit: 1.5}', 'memory.limit: must be <= 1 (got 1.5)'],
    ['gpu: -1', 'gpu: must be >= 0 (got -1)'],
    ['frontend: {httpPort: 70000}', 'frontend.httpPort: must be <= 65535 (got 70000)'],
  ])('%s', (line, message) => {
    expect(errorOf(`${minimal}${line}\n`)).toBe(`my.yaml: ${message}`);
  });

  it('a list with too few entries, a whole number that is not, a word where a number goes', () => {
    expect(errorOf('name: t\nworkers: []\n')).toBe('my.yaml: workers: must list at least one worker (got [])');
    expect(errorOf(`${minimal}gpu: 1.5\n`)).toBe('my.yaml: gpu: must be int (got 1.5)');
    expect(errorOf(`${minimal}maxModelLen: "x"\n`)).toBe('my.yaml: maxModelLen: must be number (got "x")');
    expect(errorOf('name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: half\n')).toBe('my.yaml: workers.0.gpuMemoryUtilization: must be number or "auto" (got "half")');
  });
});

describe('--set', () => {
  it('a path through a value that is not an object names that value', () => {
    expect(errorOf(minimal, ['workers.0.role.x=1'])).toBe('--set workers.0.role.x=1: "workers.0.role" is a string, not an object');
  });

  it('an empty path, or an empty step in it', () => {
    expect(errorOf(minimal, ['=1'])).toBe('--set =1: expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4');
    expect(errorOf(minimal, ['a..b=1'])).toBe('--set a..b=1: "a..b" is not a valid field path');
  });

  it('creates the maps and lists a path needs', () => {
    const r = parseRecipe(minimal, 'my.yaml', ['frontend.env.A=1', 'workers.0.args.0=--block-size', 'workers.0.args.1="32"']);
    expect(r.frontend.env).toEqual({ A: '1' });
    expect(r.workers[0].args).toEqual(['--block-size', '32']);
  });

  it('a value that is not valid YAML is taken as text', () => {
    expect(errorOf(minimal, ['name=[1'])).toMatch(/^my\.yaml: name: must be 1-64 letters.*\(got "\[1"\)$/);
    expect(parseRecipe(minimal, 'my.yaml', ['description=[unclosed']).description).toBe('[unclosed');
  });
});
