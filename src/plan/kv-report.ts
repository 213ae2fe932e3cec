import { UserError } from '../errors.js';
import {
  kvBytesPerToken, kvHeadsPerGpu, kvShapeFromConfig, kvTokensFor, MIB, overheadMiB, tokensPerGiB, transferMs,
} from './kv-math.js';

// The numbers `dynamo-dev kv` prints (pure): shape, bytes per token, and on request the KV tokens a
// worker gets, the bytes one request moves and how long that takes at a given bandwidth.

export interface KvOptions {
  gpuMib?: number;
  fraction?: number;
  weightsMib?: number;
  tokens?: number;
  /** MB/s, MB = 10^6 bytes. */
  bandwidth?: number;
  tp?: number;
  kvDtype?: string;
  maxModelLen?: number;
}

export interface KvReport {
  model: string;
  configPath: string;
  shape: {
    layers: number;
    kvHeads: number;
    kvHeadsPerGpu: number;
    headDim: number;
    dtype: string;
    dtypeBytes: number;
    dtypeAssumed: boolean;
    /** Why the KV dtype is not the config's (float32 checkpoints run in 16-bit). */
    dtypeNote?: string;
    mla: boolean;
    /** MLA only. */
    kvLoraRank?: number;
    qkRopeHeadDim?: number;
  };
  tp: number;
  bytesPerToken: number;
  tokensPerGiB: number;
  worker: null | {
    gpuMiB: number;
    fraction: number;
    requestedMiB: number;
    weightsMiB: number;
    weightsSource: 'flag' | 'files';
    overheadMiB: number;
    kvMiB: number;
    kvTokens: number;
    maxModelLen: number;
    /** kvTokens / maxModelLen, like vLLM's "Maximum concurrency" line. */
    requestsThatFit: number;
  };
  request: null | { tokens: number; bytes: number; mib: number };
  transfer: null | { bandwidthMBps: number; tokens: number; bytes: number; ms: number };
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Reference size for a transfer time when --bandwidth comes without --tokens. */
export const DEFAULT_TRANSFER_TOKENS = 1000;

export function buildKvReport(input: {
  model: string;
  configPath: string;
  config: Record<string, unknown>;
  /** Weight files found beside the config (MiB), if any. */
  weightsMiB: number | null;
  opts: KvOptions;
}): KvReport {
  const { opts } = input;
  const tp = opts.tp ?? 1;
  const shape = kvShapeFromConfig(input.config, input.configPath, { kvDtype: opts.kvDtype });
  const bpt = kvBytesPerToken(shape, tp);
  const report: KvReport = {
    model: input.model,
    configPath: input.configPath,
    shape: {
      layers: shape.layers, kvHeads: shape.kvHeads, kvHeadsPerGpu: kvHeadsPerGpu(shape, tp), headDim: shape.headDim,
      // Stryker disable next-line BooleanLiteral: kvShapeFromConfig always sets dtypeAssumed, so the fallback is never used
      dtype: shape.dtype, dtypeBytes: shape.dtypeBytes, dtypeAssumed: shape.dtypeAssumed ?? false, mla: shape.mla,
      ...(shape.dtypeNote ? { dtypeNote: shape.dtypeNote } : {}),
      ...(shape.mla ? { kvLoraRank: shape.kvLoraRank, qkRopeHeadDim: shape.qkRopeHeadDim } : {}),
    },
    tp,
    bytesPerToken: bpt,
    tokensPerGiB: tokensPerGiB(bpt),
    worker: null,
    request: null,
    transfer: null,
  };

  if (opts.weightsMib !== undefined && opts.gpuMib === undefined && opts.fraction === undefined) {
    // Said and silently ignored would read as "accounted for".
    throw new UserError('--weights-mib: only used with --gpu-mib and --fraction (the worker estimate); add them, e.g. --gpu-mib 8188 --fraction 0.38');
  }
  if (opts.gpuMib !== undefined || opts.fraction !== undefined) {
    if (opts.gpuMib === undefined) throw new UserError('--gpu-mib: needed with --fraction (the GPU\'s total memory in MiB, e.g. 8188)');
    if (opts.fraction === undefined) throw new UserError('--fraction: needed with --gpu-mib (the worker\'s --gpu-memory-utilization, e.g. 0.38)');
    if (!(opts.fraction > 0 && opts.fraction <= 1)) throw new UserError(`--fraction: ${opts.fraction} is not a fraction; use a number in (0, 1], e.g. 0.38`);
    const weights = opts.weightsMib ?? input.weightsMiB;
    // Stryker disable next-line ConditionalExpression: weightsMiB is number | null (host/hf/model-config.ts) and --weights-mib a number, so weights is never undefined
    if (weights === null || weights === undefined) {
      throw new UserError(`--weights-mib: no weight files (*.safetensors, *.bin) beside ${input.configPath}; pass --weights-mib N`);
    }
    // No model weighs nothing: 0 would make an exact-looking estimate out of a missing number.
    if (!(weights > 0)) {
      throw new UserError(opts.weightsMib !== undefined
        ? '--weights-mib: 0 MiB of weights is not a model; pass the size of its weight files in MiB, e.g. 1144'
        : `--weights-mib: the weight files beside ${input.configPath} add up to 0 MiB (not downloaded yet?); pass --weights-mib N`);
    }
    const overhead = overheadMiB(true);
    const requested = opts.gpuMib * opts.fraction;
    const kvTokens = kvTokensFor({ gpuTotalMiB: opts.gpuMib, fraction: opts.fraction, weightsMiB: weights, overheadMiB: overhead, bytesPerToken: bpt });
    const maxModelLen = opts.maxModelLen ?? 4096;
    report.worker = {
      gpuMiB: opts.gpuMib,
      fraction: opts.fraction,
      requestedMiB: round(requested),
      weightsMiB: round(weights),
      weightsSource: opts.weightsMib !== undefined ? 'flag' : 'files',
      overheadMiB: overhead,
      kvMiB: round(Math.max(0, requested - weights - overhead)),
      kvTokens,
      maxModelLen,
      requestsThatFit: round(kvTokens / maxModelLen),
    };
  }

  if (opts.tokens !== undefined) {
    const bytes = opts.tokens * bpt;
    report.request = { tokens: opts.tokens, bytes, mib: round(bytes / MIB, 1) };
  }
  if (opts.bandwidth !== undefined) {
    if (!(opts.bandwidth > 0)) throw new UserError(`--bandwidth: ${opts.bandwidth} MB/s; use a positive rate, e.g. 608`);
    const tokens = opts.tokens ?? DEFAULT_TRANSFER_TOKENS;
    const bytes = tokens * bpt;
    report.transfer = { bandwidthMBps: opts.bandwidth, tokens, bytes, ms: round(transferMs(bytes, opts.bandwidth), 1) };
  }
  return report;
}
