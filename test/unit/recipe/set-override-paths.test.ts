import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../src/recipe/load.js';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// `--set PATH=VALUE`: the maps and lists a path creates, the list indexes it accepts, the paths
// it refuses, and how it shows an argument it cannot use.
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';
const set = (...sets: string[]) => parseRecipe(minimal, 'my.yaml', sets);

describe('what a path creates', () => {
  it('a list when the next step is an index, a map otherwise (an env name that ends in a digit)', () => {
    expect(set('frontend.args.0=--log-level=debug').frontend.args).toEqual(['--log-level=debug']);
    expect(set('env.NCCL_P2P_LEVEL=0').env).toEqual({ NCCL_P2P_LEVEL: '0' });
    expect(set('env.GPU0=1').env).toEqual({ GPU0: '1' });
  });

  it('a new list starts empty: its first index is 0', () => {
    expect(errorOf(minimal, ['frontend.args.10=x'])).toBe('--set frontend.args.10=x: frontend.args has 0 entries; index 10 is past the end (use 0 to 0)');
  });

  it('an env name starting with a digit is refused as a name, not as a list index', () => {
    expect(errorOf(minimal, ['env.2FA=1'])).toBe('my.yaml: env: "2FA" is not an environment variable name; use letters, digits and "_", not starting with a digit');
  });

  it('an empty section of the file (frontend: with nothing under it) is filled', () => {
    expect(parseRecipe(`${minimal}frontend:\n`, 'my.yaml', ['frontend.routerMode=kv']).frontend.routerMode).toBe('kv');
  });
});

describe('list indexes', () => {
  const withArgs = (n: number) => `${minimal}    args: [${Array.from({ length: n }, (_, i) => `a${i}`).join(', ')}]\n`;

  it('index 63 is the last any --set may add; 64 is refused even as the next free slot', () => {
    expect(parseRecipe(withArgs(63), 'my.yaml', ['workers.0.args.63=x']).workers[0].args).toHaveLength(64);
    expect(errorOf(withArgs(64), ['workers.0.args.64=x'])).toBe('--set workers.0.args.64=x: workers.0.args has 64 entries; index 64 is past the end (use 0 to 63)');
  });

  it('an index with anything after its digits is not an index', () => {
    expect(errorOf(minimal, ['workers.0x.role=agg'])).toBe('--set workers.0x.role=agg: workers is a list; "0x" is not an index (0 to 1)');
  });
});

describe('paths refused', () => {
  it('constructor and prototype are never a field path', () => {
    expect(errorOf(minimal, ['constructor.name=x'])).toBe('--set constructor.name=x: "constructor.name" is not a valid field path');
    expect(errorOf(minimal, ['workers.0.prototype=1'])).toBe('--set workers.0.prototype=1: "workers.0.prototype" is not a valid field path');
  });
});

describe('how a refused --set is shown', () => {
  it('plain printable text as typed; control characters anywhere, or more than 80 characters, quoted with escapes', () => {
    expect(errorOf(minimal, ['name'])).toBe('--set name: expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4');
    expect(errorOf(minimal, ['name\u001b[2J'])).toBe('--set "name\\u001b[2J": expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4');
    expect(errorOf(minimal, ['\u001bname'])).toBe('--set "\\u001bname": expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4');
    expect(errorOf(minimal, ['x'.repeat(80)])).toBe(`--set ${'x'.repeat(80)}: expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4`);
    expect(errorOf(minimal, ['x'.repeat(81)])).toBe(`--set "${'x'.repeat(78)}…: expected PATH=VALUE, e.g. --set workers.0.gpuMemoryUtilization=0.4`);
  });
});
