import { describe, expect, it } from 'vitest';
import { recipeError as errorOf } from '../../helpers/recipe-errors.js';

// An invalid YAML file: the message leads with file:line and ends with the parser's reason,
// without the parser's own " at line L, column C" tail, whatever the size of L and C.

describe('the line of a YAML error', () => {
  it('past line 9 and column 9: the tail is cut and the line leads', () => {
    const text = [
      'name: long',
      'description: a recipe with enough lines for a two-digit line number',
      'engine: mocker',
      'model: Qwen/Qwen3-0.6B',
      'gpu: 0',
      'maxModelLen: 4096',
      'frontend:',
      '  httpPort: 8000',
      '  routerMode: kv',
      'workers:',
      '  - role: agg',
      '    args: [--block-size, 16]]',
      '',
    ].join('\n');
    expect(errorOf(text)).toBe('my.yaml:12: invalid YAML: Unexpected flow-seq-end token in YAML stream: "]"');
  });

  it('text of the file that reads like a position is kept; only the tail the parser added is cut', () => {
    expect(errorOf('"a"|b at line 9, column 9\n')).toBe('my.yaml:1: invalid YAML: Not a YAML token: at line 9, column 9');
  });
});
