import { describe, expect, it } from 'vitest';
import { recipeGuess } from '../../../src/host/files/recipes.js';

const BUILTINS = ['agg', 'agg-router', 'agg-router-approx', 'disagg-same-gpu', 'mocker'];
const none = () => false;

describe('recipeGuess: what an unknown recipe name most likely meant', () => {
  it('a typo: the nearest built-in', () => {
    expect(recipeGuess('agg-rooter', BUILTINS, none)).toBe('agg-router');
    expect(recipeGuess('moker', BUILTINS, none)).toBe('mocker');
  });
  it('the start of exactly one built-in (3 characters or more)', () => {
    expect(recipeGuess('disagg', BUILTINS, none)).toBe('disagg-same-gpu');
    expect(recipeGuess('mock', BUILTINS, none)).toBe('mocker');
  });
  it('the start of one built-in wins over a nearer typo; too short or too far: no guess', () => {
    expect(recipeGuess('agg-router-a', BUILTINS, none)).toBe('agg-router-approx');
    expect(recipeGuess('di', BUILTINS, none)).toBeNull();
    expect(recipeGuess('zzzzzzzz', BUILTINS, none)).toBeNull();
  });
  it('a YAML file of that name here: ./NAME.yaml, then ./NAME.yml', () => {
    expect(recipeGuess('mine', BUILTINS, (f) => f === 'mine.yaml')).toBe('./mine.yaml');
    expect(recipeGuess('mine', BUILTINS, (f) => f === 'mine.yml')).toBe('./mine.yml');
    expect(recipeGuess('../x', BUILTINS, () => true)).toBeNull();
  });
});
