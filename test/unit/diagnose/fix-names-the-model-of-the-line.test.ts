import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SAMPLES } from '../../helpers/cli.js';
import { fillFix, modelNamedIn } from '../../../src/diagnose/fill-fix.js';

// diagnose of a plain log knows no recipe: a fix that says `hf download MODEL` names the model the
// quoted line names (the lock's cache folder, Dynamo's model field), so it can be pasted.

const line = (file: string, has: string) => readFileSync(join(SAMPLES, 'logs', file), 'utf8').split('\n').find((l) => l.includes(has))!;

describe('the model a log line names', () => {
  it("a Hugging Face lock's cache folder (real filelock line): ORG/NAME", () => {
    expect(modelNamedIn(line('worker-lock-wait.log', 'Still waiting'))).toBe('Qwen/Qwen3-0.6B');
  });

  it("Dynamo's model field on a router diagnostic (real frontend line)", () => {
    expect(modelNamedIn(line('frontend-kv-events-disabled.log', 'kv_event_publisher_disabled'))).toBe('Qwen/Qwen3-0.6B');
  });

  it('an owner and a name with single dashes and dots; a repo without an owner', () => {
    expect(modelNamedIn('lock on /h/.locks/models--meta-llama--Llama-3.1-8B-Instruct/ab12.lock (elapsed: 10.0 seconds)')).toBe('meta-llama/Llama-3.1-8B-Instruct');
    expect(modelNamedIn('lock on /h/.locks/models--gpt2/ab12.lock')).toBe('gpt2');
  });

  it('none in a line without one (a KV size line, a datasets cache folder)', () => {
    expect(modelNamedIn(line('worker-agg-ready.log', 'GPU KV cache size'))).toBeNull();
    expect(modelNamedIn('lock on /h/.locks/datasets--squad/ab12.lock')).toBeNull();
  });

  it('filled into the fix where found; MODEL stays for the user where not', () => {
    const fix = 'download the model once before starting workers (`hf download MODEL`)';
    expect(fillFix(fix, { model: modelNamedIn(line('worker-lock-wait.log', 'Still waiting')) })).toBe('download the model once before starting workers (`hf download Qwen/Qwen3-0.6B`)');
    expect(fillFix(fix, { model: modelNamedIn('INFO nothing here') })).toBe(fix);
  });
});
