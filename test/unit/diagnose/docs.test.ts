import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_SIGNATURE, SIGNATURES } from '../../../src/diagnose/signatures.js';
import { KV_DIAGNOSTICS_SIGNATURE } from '../../../src/diagnose/kv-diagnostics-finding.js';
import { ROOT } from '../../helpers/cli.js';

describe('docs/diagnose.md', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'diagnose.md'), 'utf8');
  it.each([...SIGNATURES, EXIT_SIGNATURE, KV_DIAGNOSTICS_SIGNATURE].map((s) => [s.code, s.severity]))('documents %s (%s): a table row and a section', (code, severity) => {
    expect(doc).toContain(`| [\`${code}\`](#${code.replace(/\./g, '')}-${severity}) | ${severity} |`);
    expect(doc).toContain(`### \`${code}\` (${severity})`);
  });
});
