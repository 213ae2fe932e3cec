import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildKvReport } from '../../../src/plan/kv-report.js';
import { renderKvReport } from '../../../src/ui/kv-report.js';
import { FIXTURES } from '../../helpers/cli.js';

const qwen = JSON.parse(readFileSync(join(FIXTURES, 'configs', 'Qwen3-0.6B.config.json'), 'utf8')) as Record<string, unknown>;
const report = (opts: Parameters<typeof buildKvReport>[0]['opts'], weightsMiB: number | null = 1433) =>
  buildKvReport({ model: 'Qwen/Qwen3-0.6B', configPath: '/c/config.json', config: qwen, weightsMiB, opts });

describe('kv report', () => {
  it('bytes per token, tokens per GiB, request bytes and transfer time', () => {
    const r = report({ tokens: 1500, bandwidth: 608 });
    expect(r.bytesPerToken).toBe(114_688);
    expect(r.tokensPerGiB).toBe(9_362);
    expect(r.request).toEqual({ tokens: 1500, bytes: 172_032_000, mib: 164.1 });
    expect(r.transfer).toEqual({ bandwidthMBps: 608, tokens: 1500, bytes: 172_032_000, ms: 282.9 });
    const text = renderKvReport(r);
    expect(text).toContain('114,688');
    expect(text).toContain('164.1 MiB');
    expect(text).toContain('283 ms');
    expect(text).toContain('1 MB = 10^6 bytes');
  });

  it('worker KV tokens and how many max-length requests fit, weights from files or the flag', () => {
    const r = report({ gpuMib: 8188, fraction: 0.38, maxModelLen: 4096 });
    expect(r.worker).toMatchObject({ weightsMiB: 1433, weightsSource: 'files', overheadMiB: 400 });
    expect(r.worker!.kvTokens).toBe(Math.floor(((8188 * 0.38 - 1433 - 400) * 1024 * 1024) / 114_688));
    expect(r.worker!.requestsThatFit).toBeCloseTo(r.worker!.kvTokens / 4096, 2);
    expect(report({ gpuMib: 8188, fraction: 0.38, weightsMib: 1000 }).worker).toMatchObject({ weightsMiB: 1000, weightsSource: 'flag' });
  });

  it('rejects incomplete or impossible worker options with the flag named', () => {
    expect(() => report({ gpuMib: 8188 })).toThrow(/^--fraction: needed with --gpu-mib/);
    expect(() => report({ fraction: 0.4 })).toThrow(/^--gpu-mib: needed with --fraction/);
    expect(() => report({ weightsMib: 1145 })).toThrow(/^--weights-mib: only used with --gpu-mib and --fraction/);
    expect(() => report({ gpuMib: 8188, fraction: 1.5 })).toThrow(/^--fraction: 1.5 is not a fraction/);
    expect(() => report({ gpuMib: 8188, fraction: 0.4 }, null)).toThrow(/^--weights-mib: no weight files/);
    expect(() => report({ bandwidth: 0 })).toThrow(/^--bandwidth/);
  });

  it('a bandwidth without --tokens times 1,000 tokens', () => {
    expect(report({ bandwidth: 608 }).transfer).toMatchObject({ tokens: 1000, bytes: 114_688_000, ms: 188.6 });
  });

  it('--tp 2 halves the KV heads per GPU', () => {
    const r = report({ tp: 2 });
    expect(r.shape.kvHeadsPerGpu).toBe(4);
    expect(r.bytesPerToken).toBe(57_344);
  });
});
