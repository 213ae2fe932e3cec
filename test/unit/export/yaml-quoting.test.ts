import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readsAsOtherThan, toYaml } from '../../../src/export/yaml.js';

// Kubernetes reads a manifest as YAML 1.1 (sigs.k8s.io/yaml over go-yaml v2): strings that 1.1 reads
// as booleans, numbers or special keys must be quoted, or an env value "on" arrives as true.
const TRICKY = ['on', 'off', 'yes', 'no', 'y', 'n', 'On', 'YES', 'true', 'null', '~', '1_000', '12:30:00', '0x1F', '0o17', '017', '1e3', '.inf', '=', '<<', ''];
const PLAIN = ['kv', 'round-robin', 'Qwen/Qwen3-0.6B', '--router-mode', 'http://frontend:8000', 'a=b', '1.0.0', 'online', 'yesterday', '12:30 pm'];

describe('readsAsOtherThan', () => {
  for (const s of TRICKY) it(`"${s}" is read as something else by YAML 1.1 or 1.2`, () => expect(readsAsOtherThan(s)).toBe(true));
  for (const s of PLAIN) it(`"${s}" reads back as itself`, () => expect(readsAsOtherThan(s)).toBe(false));
});

describe('toYaml', () => {
  const rendered = {
    doc: { spec: { env: TRICKY.map((value, i) => ({ name: `V${i}`, value })), args: ['--foo', 'off', 'kv'], replicas: 2, enabled: true } },
    comments: [],
  };
  const text = toYaml(rendered as never, ['header']);

  it('every tricky string comes back as the same string under YAML 1.1 and 1.2', () => {
    for (const version of ['1.1', '1.2'] as const) {
      const back = parse(text, { version }) as typeof rendered.doc;
      expect(back.spec.env.map((e) => e.value)).toEqual(TRICKY);
      expect(back.spec.args).toEqual(['--foo', 'off', 'kv']);
    }
  });

  it('real numbers and booleans stay unquoted; plain strings stay plain', () => {
    expect(text).toContain('replicas: 2\n');
    expect(text).toContain('enabled: true\n');
    expect(text).toContain('- kv\n');
    expect(text).toContain('value: "on"\n');
    expect(text).toContain('value: "12:30:00"\n');
  });
});
