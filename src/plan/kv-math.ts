import { UserError } from '../errors.js';

// KV-cache arithmetic (FACTS §3): bytes/token = layers x kv_heads x head_dim x (K+V) x dtype bytes.

export const MIB = 1024 * 1024;

export interface KvModelShape {
  layers: number;
  kvHeads: number;
  headDim: number;
  dtypeBytes: number;
  /** MLA models (DeepSeek V2/V3) cache one latent vector per layer, not K and V. */
  mla: boolean;
  dtype: string;
  /** The config names no dtype: bfloat16 was assumed. */
  dtypeAssumed?: boolean;
  /** Why the KV dtype differs from the config's (float32 checkpoints run in 16-bit). */
  dtypeNote?: string;
  /** MLA only: the latent's parts (headDim = kvLoraRank + qkRopeHeadDim). */
  kvLoraRank?: number;
  qkRopeHeadDim?: number;
}

const DTYPE_BYTES: Record<string, number> = {
  float32: 4, fp32: 4, float: 4,
  bfloat16: 2, bf16: 2, float16: 2, fp16: 2, half: 2,
  fp8: 1, fp8_e4m3: 1, fp8_e5m2: 1, float8_e4m3fn: 1, float8_e5m2: 1, int8: 1,
};

export function dtypeBytes(dtype: string, field = 'dtype'): number {
  const b = DTYPE_BYTES[dtype.toLowerCase()];
  if (b === undefined) throw new UserError(`${field}: unknown dtype "${dtype}"; expected one of ${Object.keys(DTYPE_BYTES).join(', ')}`);
  return b;
}


/** Reads the fields that matter from a HF config.json (text_config for multimodal wrappers). */
export function kvShapeFromConfig(config: Record<string, unknown>, source: string, opts: { kvDtype?: string } = {}): KvModelShape {
  const c = (typeof config.text_config === 'object' && config.text_config !== null && config.num_hidden_layers === undefined
    ? (config.text_config as Record<string, unknown>)
    : config);
  // Every size the arithmetic uses is a positive whole number of sane size: a config with 0, a
  // negative or 1e308 would otherwise print a negative or infinite bytes/token as if it were true.
  const MAX_FIELD = 1 << 24;
  const num = (k: string): number | undefined => {
    const v = c[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0 || v > MAX_FIELD) {
      throw new UserError(`${source}: field "${k}" is ${JSON.stringify(v)}; expected a whole number from 1 to ${MAX_FIELD}`);
    }
    return v;
  };
  const need = (k: string, why = 'needed for KV arithmetic'): number => {
    const v = num(k);
    if (v === undefined) throw new UserError(`${source}: missing field "${k}" ${why}`);
    return v;
  };
  const layers = need('num_hidden_layers');
  // MLA (DeepSeek-V2/V3 style): kv_lora_rank is set (a number; null or absent elsewhere).
  const mla = c.kv_lora_rank !== undefined && c.kv_lora_rank !== null;
  let kvHeads: number;
  let headDim: number;
  let latent: { kvLoraRank: number; qkRopeHeadDim: number } | null = null;
  if (mla) {
    // MLA caches one compressed latent (kv_lora_rank) plus the decoupled rope key (qk_rope_head_dim)
    // per token and layer, shared by all heads: vLLM's MLA cache entry is kv_lora_rank + qk_rope_head_dim.
    kvHeads = 1;
    latent = { kvLoraRank: need('kv_lora_rank'), qkRopeHeadDim: need('qk_rope_head_dim', 'needed for MLA KV arithmetic (with kv_lora_rank)') };
    headDim = latent.kvLoraRank + latent.qkRopeHeadDim;
  } else {
    const heads = need('num_attention_heads');
    kvHeads = num('num_key_value_heads') ?? heads;
    // head_dim from config when present: hidden_size / heads is wrong for Qwen3.
    const explicit = num('head_dim');
    if (explicit !== undefined) headDim = explicit;
    else {
      const hidden = need('hidden_size', 'needed for KV arithmetic (there is no head_dim)');
      headDim = hidden / heads;
      if (!Number.isInteger(headDim)) {
        throw new UserError(`${source}: hidden_size ${hidden} / num_attention_heads ${heads} is not a whole head_dim; add "head_dim"`);
      }
    }
  }
  // The root config's dtype first, then the text config's, as vLLM reads it (vllm/config/model.py
  // get_torch_dtype: "Fallbacks for multi-modal models if the root config does not define dtype").
  const configDtype = config.torch_dtype ?? config.dtype ?? c.torch_dtype ?? c.dtype;
  const useKv = opts.kvDtype !== undefined && opts.kvDtype !== 'auto';
  // vLLM's --dtype auto runs float32 checkpoints in 16-bit ("Following the common practice, we use
  // float16 for float32 models"; bfloat16 since 0.10.1: vllm config _get_and_verify_dtype), so their
  // KV cache holds 2-byte values, not 4.
  const float32 = !useKv && typeof configDtype === 'string' && ['float32', 'float', 'fp32'].includes(configDtype.toLowerCase());
  const dtype = useKv ? opts.kvDtype! : float32 ? 'bfloat16' : String(configDtype ?? 'bfloat16');
  if (layers * kvHeads * headDim * 2 * 4 > 2 ** 40) {
    throw new UserError(`${source}: num_hidden_layers ${layers} x KV heads ${kvHeads} x head_dim ${headDim} gives more than 1 TiB per token; not a real model's config`);
  }
  return {
    layers, kvHeads, headDim, mla, dtype,
    dtypeBytes: dtypeBytes(dtype, useKv ? '--kv-dtype' : `${source}: torch_dtype`),
    dtypeAssumed: !useKv && (configDtype === undefined || configDtype === null),
    ...(float32 ? { dtypeNote: `config says ${String(configDtype)}; vLLM runs float32 models in 16-bit (--dtype auto)` } : {}),
    ...(latent ?? {}),
  };
}

/** KV heads one GPU holds under tensor parallelism: kv_heads / tp, at least 1 (heads are replicated). */
export function kvHeadsPerGpu(shape: KvModelShape, tp = 1): number {
  return shape.mla ? 1 : Math.max(1, Math.floor(shape.kvHeads / tp));
}

export function kvBytesPerToken(shape: KvModelShape, tp = 1): number {
  return shape.layers * kvHeadsPerGpu(shape, tp) * shape.headDim * (shape.mla ? 1 : 2) * shape.dtypeBytes;
}

export const GIB = 1024 * MIB;

/** Whole tokens that fit in one GiB of KV cache (Qwen3-0.6B: 9,362). */
export function tokensPerGiB(bytesPerToken: number): number {
  return Math.floor(GIB / bytesPerToken);
}

/**
 * Time to move `bytes` at `mbPerSecond` MB/s, in ms. MB = 10^6 bytes (as transfer rates are
 * quoted): 1,500 tokens x 114,688 B = 172,032,000 B at 608 MB/s = 283 ms.
 */
export function transferMs(bytes: number, mbPerSecond: number): number {
  return (bytes / (mbPerSecond * 1e6)) * 1000;
}

/** Activation peak + non-torch memory vLLM keeps outside KV (measured ~350 MiB eager, 0.6B, 8 GB GPU). */
export function overheadMiB(enforceEager: boolean): number {
  return enforceEager ? 400 : 700;
}

/** Estimated KV tokens for one worker: (fraction x total - weights - overhead) / bytes per token. */
export function kvTokensFor(opts: {
  gpuTotalMiB: number;
  fraction: number;
  weightsMiB: number;
  overheadMiB: number;
  bytesPerToken: number;
}): number {
  const kvMiB = opts.gpuTotalMiB * opts.fraction - opts.weightsMiB - opts.overheadMiB;
  // Stryker disable next-line EqualityOperator: at exactly 0 MiB the formula below gives 0 tokens as well
  if (kvMiB <= 0) return 0;
  return Math.floor((kvMiB * MIB) / opts.bytesPerToken);
}
