import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_CHECKS } from '../../../src/doctor/registry.js';

// The title doctor prints beside each check id is the heading docs/checks.md gives that check, so
// a user can find the check's explanation from what the terminal says.
describe('check titles', () => {
  it.each(ALL_CHECKS.map((c) => [c.id, c.title] as const))('%s is titled as in docs/checks.md', (id, title) => {
    const docs = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'checks.md'), 'utf8');
    expect(title.length).toBeGreaterThan(0);
    expect(docs).toContain(`\n## \`${id}\` — ${title}\n`);
  });
});
