import { describe, expect, it } from 'vitest';
import type { SupervisorResult } from '../../../src/run/supervisor.js';
import { supervisorHarness } from '../../helpers/supervisor-harness.js';

// The live hint of a worker waiting for the Hugging Face download lock names who holds it: the
// holder's command line with its whitespace runs made single spaces, whole up to 60 characters, else
// cut after a whole word with an ellipsis. If the run then misses its deadline, the failure repeats
// that hint, unless a more precise one (the logging level hiding the KV line) is given.

const lockLine = '2026-10-07T04:58:21.118004Z  INFO filelock: Still waiting to acquire lock on /hf/.locks/x.lock (elapsed: 10.1 seconds)';
const see = '; see `dynamo-dev doctor --only hf.locks`';

async function hintFor(cmd: string): Promise<string> {
  const h = supervisorHarness({ deps: { lockHolders: async () => [{ pid: 4242, cmd }] } });
  void h.sup.run();
  await h.clock.advance(0);
  h.lines.get('agg-0')!(lockLine);
  await h.clock.advance(0);
  const text = h.of('hint')[0].text;
  void h.sup.stop('SIGINT');
  await h.clock.advance(2000);
  return text;
}

describe('who holds the lock, in the live hint', () => {
  it('whitespace runs of the command line (tabs, newlines, several spaces) become single spaces', async () => {
    expect(await hintFor('python3   -m  huggingface_hub\tdownload\nQwen/Qwen3-0.6B'))
      .toBe(`waiting for the Hugging Face download lock held by pid 4242 (python3 -m huggingface_hub download Qwen/Qwen3-0.6B)${see}`);
  });

  it('whitespace around it (a command line read with its trailing NUL as a space) is dropped; only whitespace is no command', async () => {
    expect(await hintFor(' python3 download.py \n')).toBe(`waiting for the Hugging Face download lock held by pid 4242 (python3 download.py)${see}`);
    expect(await hintFor(' \t ')).toBe(`waiting for the Hugging Face download lock held by pid 4242${see}`);
  });

  it('a command line of exactly 60 characters is shown whole', async () => {
    const cmd = 'python3 -m huggingface_hub download Qwen/Qwen3-0.6B --revisi';
    expect(cmd).toHaveLength(60);
    expect(await hintFor(cmd)).toBe(`waiting for the Hugging Face download lock held by pid 4242 (${cmd})${see}`);
  });

  it('a longer one is cut within its first 60 characters, after a whole word', async () => {
    expect(await hintFor('python3 -m huggingface_hub download Qwen/Qwen3-0.6B --local-dir /models/qwen'))
      .toBe(`waiting for the Hugging Face download lock held by pid 4242 (python3 -m huggingface_hub download Qwen/Qwen3-0.6B…)${see}`);
  });
});

describe('the deadline repeats it', () => {
  it('a worker still waiting for the lock at the deadline: the failure says whose lock it was', async () => {
    const h = supervisorHarness({ readyTimeoutMs: 3000 });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(lockLine);
    await h.clock.advance(3000);
    await h.clock.advance(2000);
    expect((await running as Extract<SupervisorResult, { outcome: 'failed' }>).reason).toBe('not ready after 3 s: agg-0 is still waiting for the Hugging Face lock /hf/.locks/x.lock');
    expect(h.of('failed')[0].hint).toBe(`agg-0 was waiting for the Hugging Face download lock held by pid 4242 (python3 download.py)${see}`);
  });

  it('a logging level that hides the KV line is the more precise hint and is kept', async () => {
    const h = supervisorHarness({ readyTimeoutMs: 3000, env: { VLLM_LOGGING_LEVEL: 'ERROR' } });
    const running = h.sup.run();
    await h.clock.advance(0);
    h.lines.get('agg-0')!(lockLine);
    await h.clock.advance(3000);
    await h.clock.advance(2000);
    await running;
    expect(h.of('failed')[0].hint).toMatch(/^VLLM_LOGGING_LEVEL=ERROR hides vLLM's INFO line/);
  });
});
