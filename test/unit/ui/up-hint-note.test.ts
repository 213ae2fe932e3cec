import { describe, expect, it } from 'vitest';
import { formatHintNote } from '../../../src/ui/up-report.js';
import { kvDiagnosticsHint } from '../../../src/plan/kv-diagnostics.js';
import { visibleLength } from '../../../src/ui/fit.js';

// up's live view cuts a row's hint to its room ("Dynamo 1.3.1 does not log…"); at ready the
// release hint is said in full under the ready block, wrapped at 80 columns, the command whole.
describe('the hint note at ready', () => {
  it('80 columns: whole words, every line fits, `dynamo-dev probe` kept whole', () => {
    const lines = formatHintNote('frontend', kvDiagnosticsHint('1.3.1'), 80).replace(/\x1b\[[0-9;]*m/g, '').trimEnd().split('\n');
    expect(lines.every((l) => visibleLength(l) <= 80)).toBe(true);
    expect(lines.join(' ').replace(/\s+/g, ' ')).toBe('! frontend: Dynamo 1.3.1 does not log kv_event_publisher_disabled (1.4.0 and newer do): up cannot warn when workers publish no KV events; check routing with `dynamo-dev probe`');
    expect(lines.some((l) => l.includes('dynamo-dev probe'))).toBe(true);
  });
  it('piped width: one line', () => {
    expect(formatHintNote('frontend', 'text here').replace(/\x1b\[[0-9;]*m/g, '')).toBe('! frontend: text here\n');
  });
});
