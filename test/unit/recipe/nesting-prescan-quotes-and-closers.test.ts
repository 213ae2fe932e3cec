import { describe, expect, it } from 'vitest';
import { nestingProblem, parseRecipe } from '../../../src/recipe/load.js';

// The nesting pre-scan (refusing absurd nesting before the YAML parser recurses into it) must not
// be fooled into silence by quotes, comments and closing brackets around ordinary text, nor refuse
// ordinary recipes: 65 brackets after such text are still refused.
const minimal = 'name: t\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\n';
const DEEP = 'nested deeper than 64 levels; a recipe nests a few';
const deep = `model: ${'['.repeat(65)}\n`;

describe('a quoted value ends at its closing quote', () => {
  it('a short double-quoted value: nesting after it still counts', () => {
    expect(nestingProblem(`description: "x"\n${deep}`)).toBe(DEEP);
    expect(nestingProblem(`description: "ab"\n${deep}`)).toBe(DEEP);
  });

  it('in single quotes a backslash is text: the next quote still closes the value', () => {
    expect(parseRecipe(`${minimal}description: 'C:\\'\n`, 'my.yaml').description).toBe('C:\\');
    expect(nestingProblem(`description: 'C:\\'\n${deep}`)).toBe(DEEP);
  });

  it('an apostrophe after a word, before a blank, opens no quote', () => {
    expect(parseRecipe(`${minimal}description: the workers' memory\n`, 'my.yaml').description).toBe("the workers' memory");
    expect(nestingProblem(`description: the workers' ${'['.repeat(65)}`)).toBe(DEEP);
  });
});

describe('what opens a comment', () => {
  it('a # right after a word, before a blank, is text: brackets after it count', () => {
    expect(nestingProblem(`a: x# ${'['.repeat(65)}`)).toBe(DEEP);
  });
});

describe('list dashes at the start of a line', () => {
  it('65 dashes after indentation on a later line are nesting', () => {
    expect(nestingProblem(`workers:\n  ${'- '.repeat(65)}role: agg\n`)).toBe(DEEP);
  });

  it('dashes inside a value are text', () => {
    const description = `a ${'- '.repeat(70)}b`;
    expect(nestingProblem(`description: ${description}\n`)).toBeNull();
    expect(parseRecipe(`${minimal}description: ${description}\n`, 'my.yaml').description).toBe(description);
  });
});

describe('closing brackets', () => {
  it('64 workers each with an args list: every ] closes its list', () => {
    const workers = Array.from({ length: 64 }, () => '{role: agg, gpuMemoryUtilization: 0.01, args: [--enforce-eager]}').join(', ');
    expect(parseRecipe(`name: t\nworkers: [${workers}]\n`, 'my.yaml').workers).toHaveLength(64);
  });

  it('a stray ] or } in a plain value does not lower the count for what follows', () => {
    expect(parseRecipe(`${minimal}description: see ]]\n`, 'my.yaml').description).toBe('see ]]');
    expect(nestingProblem(`description: see ]\n${deep}`)).toBe(DEEP);
    expect(nestingProblem(`description: see }\n${deep}`)).toBe(DEEP);
  });
});
