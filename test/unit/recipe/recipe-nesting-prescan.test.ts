import { describe, expect, it } from 'vitest';
import { nestingProblem, parseRecipe } from '../../../src/recipe/load.js';

// The cheap scan that refuses absurdly nested files before the YAML parser recurses into them,
// at its limits (64 levels, 512 spaces), and the ordinary text it must leave alone.
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';
const DEEP = 'nested deeper than 64 levels; a recipe nests a few';

describe('nesting limits', () => {
  it('64 levels of brackets pass the scan; 65 do not', () => {
    expect(nestingProblem(`a: ${'['.repeat(64)}${']'.repeat(64)}`)).toBeNull();
    expect(nestingProblem(`a: ${'['.repeat(65)}${']'.repeat(65)}`)).toBe(DEEP);
  });

  it('a line indented 512 spaces passes the scan; 513 do not', () => {
    expect(nestingProblem(`a:\n${' '.repeat(512)}b: 1\n`)).toBeNull();
    expect(nestingProblem(`a:\n${' '.repeat(513)}b: 1\n`)).toBe('indented more than 512 spaces; a recipe nests a few levels');
  });

  it('64 list dashes on a line pass the scan; 65 do not, with one or more blanks after each', () => {
    expect(nestingProblem('- '.repeat(64))).toBeNull();
    expect(nestingProblem('- '.repeat(65))).toBe(DEEP);
    expect(nestingProblem('-  '.repeat(65))).toBe(DEEP);
    expect(nestingProblem('-\t'.repeat(65))).toBe(DEEP);
  });
});

describe('what is not nesting', () => {
  it('many sibling lists and maps, one after another', () => {
    const workers = Array.from({ length: 64 }, () => '{role: agg, gpuMemoryUtilization: 0.01}').join(', ');
    expect(parseRecipe(`name: t\nworkers: [${workers}]\n`, 'my.yaml').workers).toHaveLength(64);
  });

  it('a long line of words is not indentation', () => {
    expect(nestingProblem(`description: ${'a '.repeat(600)}\n`)).toBeNull();
  });

  it('brackets inside a double-quoted value, also after an escaped quote', () => {
    const text = `${minimal}description: "say \\"${'['.repeat(100)}\\" twice"\n`;
    expect(parseRecipe(text, 'my.yaml').description).toBe(`say "${'['.repeat(100)}" twice`);
  });

  it('a quoted key at the very start of the file', () => {
    expect(nestingProblem(`"${'['.repeat(100)}": 1\n`)).toBeNull();
  });

  it('brackets in a comment that starts the file', () => {
    expect(parseRecipe(`# ${'{'.repeat(100)}\n${minimal}`, 'my.yaml').name).toBe('t');
  });

  it('a comment on the last line without a newline', () => {
    expect(nestingProblem(`${minimal}# ${'['.repeat(100)}`)).toBeNull();
  });

  it('a # inside a word starts no comment: brackets after it still count', () => {
    expect(nestingProblem(`a: x#${'['.repeat(65)}`)).toBe(DEEP);
  });
});

describe('what a comment does not hide', () => {
  it('deep nesting after a comment line', () => {
    expect(nestingProblem(`# note\na: ${'['.repeat(65)}`)).toBe(DEEP);
  });

  it('a deeply indented line right after a comment', () => {
    expect(nestingProblem(`# note\n${' '.repeat(600)}a: 1\n`)).toBe('indented more than 512 spaces; a recipe nests a few levels');
  });
});
