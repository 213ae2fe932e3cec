import { describe, expect, it } from 'vitest';
import { earlyFactsFor, guessProbeTarget } from '../../../src/doctor/early-probes.js';

// The interpreter and engine doctor starts probing before the recipe is parsed: read from the
// recipe's top-level keys only, the way a user writes them.
const guess = (recipeText: string) => guessProbeTarget({ recipeText, run: null });

describe('guessProbeTarget: recipe text', () => {
  it('a value right after the colon, or after tabs and spaces, with or without a comment', () => {
    expect(guess('python:/opt/py\n').interpreter).toBe('/opt/py');
    expect(guess('python: \t /opt/py   \n').interpreter).toBe('/opt/py');
    expect(guess('engine: mocker # the fake engine\n').engine).toBe('mocker');
    expect(guess("python: '/opt/my venv/bin/python'  # quoted\n").interpreter).toBe('/opt/my venv/bin/python');
  });

  it('an empty value, or only a comment, leaves the default', () => {
    expect(guess('python:\nengine: # none\n')).toEqual({ interpreter: 'python3', engine: 'vllm' });
    expect(guess('python: ""\n').interpreter).toBe('python3');
  });

  it('only top-level keys count: an indented key or a longer key name does not', () => {
    expect(guess('workers:\n  - role: agg\n    engine: mocker\n').engine).toBe('vllm');
    expect(guess('pythonPath: /x\nmy_engine: mocker\n')).toEqual({ interpreter: 'python3', engine: 'vllm' });
  });

  it('the key is found on any line, not only the first', () => {
    expect(guess('name: a\n\nengine: mocker\n').engine).toBe('mocker');
  });

  it('an engine other than mocker is probed as vLLM', () => {
    expect(guess('engine: sglang\n').engine).toBe('vllm');
  });
});

describe('earlyFactsFor', () => {
  it('no checks start nothing; an unknown check id starts nothing either', () => {
    expect([...earlyFactsFor([])]).toEqual([]);
    expect([...earlyFactsFor([{ id: 'not.a.check' }])]).toEqual([]);
  });
});
