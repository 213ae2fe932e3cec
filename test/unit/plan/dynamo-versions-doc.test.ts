import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOf, releaseFor } from '../../../src/plan/dynamo-releases.js';
import { ROOT } from '../../helpers/cli.js';

// docs/dynamo-versions.md "What each release can and cannot show" says what the release table
// says: a row that drifts from src/plan/dynamo-releases.ts fails here.

const doc = readFileSync(join(ROOT, 'docs', 'dynamo-versions.md'), 'utf8');
const section = doc.slice(doc.indexOf('## What each release can and cannot show'));
const rows = section.split('\n').filter((l) => /^\| \d+\.\d+\.\d+ \|/.test(l)).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
const yes = (b: boolean) => (b ? 'yes' : 'no');

describe('docs/dynamo-versions.md: what each release can and cannot show', () => {
  it('lists the two releases of the test matrix and those between', () => {
    expect(rows.map((r) => r[0])).toEqual(['1.3.1', '1.4.2', '1.5.1', '1.6.1']);
  });

  it.each(rows.map((r) => [r[0], r]))('%s agrees with the release table and its build', (release, r) => {
    const f = releaseFor(release).facts;
    const b = buildOf(release)!;
    expect(r.slice(1)).toEqual([
      yes(f.cachedTokens),
      yes(f.kvEventDiagnostics),
      yes(f.modelReadyEndpoint),
      f.cardFilesFromWorker ? 'served by the worker' : 'frontend\'s Hugging Face cache',
      `vLLM ${b.vllm}, torch ${b.torch}, CUDA ${b.cuda}, driver >= ${b.minDriver}`,
    ]);
  });
});
