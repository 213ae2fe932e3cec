import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../../src/errors.js';
import { kvShapeFromConfig } from '../../../src/plan/kv-math.js';
import { FIXTURES } from '../../helpers/cli.js';

// config.json fields written as null (transformers serialises an unset field as null): each is
// read as absent, never as a value and never as a crash.
const { torch_dtype: _dtype, num_hidden_layers: _layers, ...qwenBare } = JSON.parse(
  readFileSync(join(FIXTURES, 'configs', 'Qwen3-0.6B.config.json'), 'utf8'),
) as Record<string, unknown>;
const qwenNoDtype = { ...qwenBare, num_hidden_layers: 28 };

describe('null fields in config.json', () => {
  it('text_config null without top-level layers: the missing field is named (a user error, not a crash)', () => {
    const read = () => kvShapeFromConfig({ ...qwenBare, text_config: null }, 'cfg.json');
    expect(read).toThrow(UserError);
    expect(read).toThrow('cfg.json: missing field "num_hidden_layers" needed for KV arithmetic');
  });

  it('"dtype": null is no dtype: bfloat16 is assumed, and the report says so', () => {
    expect(kvShapeFromConfig({ ...qwenNoDtype, dtype: null }, 'cfg.json')).toMatchObject({ dtype: 'bfloat16', dtypeBytes: 2, dtypeAssumed: true });
    // A named dtype is no assumption.
    expect(kvShapeFromConfig({ ...qwenNoDtype, dtype: 'float16' }, 'cfg.json')).toMatchObject({ dtype: 'float16', dtypeAssumed: false });
  });
});
