import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECK_IDS } from '../../../src/doctor/types.js';
import { EXIT_SIGNATURE, SIGNATURES } from '../../../src/diagnose/signatures.js';
import { ROOT } from '../../helpers/cli.js';

// What `diagnose` prints under "why:" and "fix:" is what docs/diagnose.md promises for each code, word
// for word (the docs may set code in backticks and wrap lines), so a user reading either gets the
// same advice, and a fix edited in one place shows up as a failing test instead of drifting apart.
const plain = (s: string) => s.replace(/[`*]/g, '').replace(/\s+/g, ' ').trim();

function section(doc: string, code: string): string {
  const start = doc.indexOf(`### \`${code}\``);
  expect(start, `docs/diagnose.md has a section for ${code}`).toBeGreaterThan(-1);
  const end = doc.indexOf('\n### ', start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

/** The paragraph of a section that starts with `label` (e.g. "Cause: "), without the label. */
function paragraph(sec: string, label: string): string {
  const at = sec.indexOf(`\n${label}`);
  expect(at, `a "${label.trim()}" paragraph`).toBeGreaterThan(-1);
  const end = sec.indexOf('\n\n', at + 1);
  return sec.slice(at + 1 + label.length, end === -1 ? undefined : end);
}

describe('finding texts: what diagnose prints is what docs/diagnose.md says', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'diagnose.md'), 'utf8');

  it.each(SIGNATURES.map((s) => [s.code, s]))('%s: the same title, cause and fix', (code, sig) => {
    const sec = section(doc, code);
    expect(sec).toContain(`**${sig.title}.**`);
    expect(plain(paragraph(sec, 'Cause: ')).replace(/\.$/, '')).toBe(plain(sig.explanation).replace(/\.$/, ''));
    expect(plain(paragraph(sec, 'Fix: ')).replace(/\.$/, '')).toBe(plain(sig.fix).replace(/\.$/, ''));
  });

  it('the table of codes shows each code\'s title as diagnose prints it, the run\'s exits too', () => {
    for (const s of [...SIGNATURES, EXIT_SIGNATURE]) expect(doc, s.code).toContain(`| ${s.severity} | ${s.title} |`);
    expect(section(doc, EXIT_SIGNATURE.code)).toContain(`**${EXIT_SIGNATURE.title}.**`);
  });

  it('every doctor check a fix points to exists (`--only a,b` runs it)', () => {
    const named = SIGNATURES.flatMap((s) => [...s.fix.matchAll(/doctor --only ([\w.,-]+)/g)].flatMap((m) => m[1].split(',')));
    expect(named.length).toBeGreaterThan(10);
    for (const id of named) expect(CHECK_IDS as readonly string[], id).toContain(id);
  });

  it('the fixes that stop leftovers name the teardown command that stops only engine processes', () => {
    for (const code of ['cuda.oom', 'vllm.free-memory', 'dynamo.kv-source-missing', 'net.port-in-use']) {
      expect(SIGNATURES.find((s) => s.code === code)!.fix, code).toContain('`dynamo-dev teardown --orphans`');
    }
  });
});
