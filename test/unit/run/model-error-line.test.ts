import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyLine } from '../../../src/run/readiness.js';
import { modelErrorFailure } from '../../../src/run/policy/failure.js';

// The frontend's "Model materialization failed" (real 1.6.1 text, ANSI colours and all): a file
// that does not parse is fatal at once; any other materialization error may pass (kept waiting).

const REAL = readFileSync(join(__dirname, '..', '..', 'fixtures', 'samples', 'logs', 'frontend-1.6.1-model-materialization-failed.log'), 'utf8').trim();

describe('classifyLine: Model materialization failed', () => {
  it('the real 1.6.1 line for a truncated tokenizer.json: model-error with the error text, quotes and colours gone', () => {
    expect(classifyLine(REAL, null)).toEqual({
      kind: 'model-error',
      error: expect.stringMatching(/^tokenizer: \/root\/\.cache\/dynamo\/mdc\/by-slug\/\S+\/tokenizer\.json: EOF while parsing a value at line 7 column 11$/),
    });
  });

  it('a materialization error a retry may mend (the hub did not answer) is not fatal', () => {
    // eslint-disable-next-line no-control-regex
    const line = REAL.replace(/\u001b\[[0-9;]*m/g, '').replace(/error=.*$/, 'error="failed to fetch config.json: connection reset by peer"');
    expect(line).toContain('Model materialization failed; scheduling retry');
    expect(classifyLine(line, null)).toBeNull();
  });

  it('the failure names the process and the error, and says what to do', () => {
    expect(modelErrorFailure('frontend', 'tokenizer: /x/tokenizer.json: EOF while parsing a value at line 7 column 11')).toMatchObject({
      process: 'frontend',
      reason: 'frontend cannot load the model: tokenizer: /x/tokenizer.json: EOF while parsing a value at line 7 column 11',
      hint: expect.stringContaining('download the model again'),
    });
  });
});
