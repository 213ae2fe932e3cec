import { describe, expect, it } from 'vitest';
import { listWords } from '../../../src/list-words.js';

describe('listWords', () => {
  it('says a list as a person writes it, with "and" or "or" before the last', () => {
    expect(listWords([])).toBe('');
    expect(listWords(['dynamo'])).toBe('dynamo');
    expect(listWords(['dynamo', 'vllm'])).toBe('dynamo and vllm');
    expect(listWords(['string', 'number', 'boolean'], 'or')).toBe('string, number or boolean');
  });
});
