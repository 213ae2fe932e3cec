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
  const num = (k: string): number | undefined => (typeof c[k] === 'number' ? (c[k] as number) : undefined);
  const need = (k: string): number => {
    const v = num(k);
    if (v === undefined) throw new UserError(`${source}: missing field "${k}" needed for KV arithmetic`);
    return v;
  };
  const layers = need('num_hidden_layers');
  const mla = num('kv_lora_rank') !== undefined;
  let kvHeads: number;
  let headDim: number;
  if (mla) {
    // MLA caches the compressed latent plus the rope part, shared across heads.
    kvHeads = 1;
    headDim = need('kv_lora_rank') + (num('qk_rope_head_dim') ?? 0);
  } else {
    const heads = need('num_attention_heads');
    kvHeads = num('num_key_value_heads') ?? heads;
    // head_dim from config when present: hidden_size / heads is wrong for Qwen3.
    headDim = num('head_dim') ?? need('hidden_size') / heads;
  }
  const dtype = opts.kvDtype ?? String(c.torch_dtype ?? c.dtype ?? config.torch_dtype ?? config.dtype ?? 'bfloat16');
  return { layers, kvHeads, headDim, dtypeBytes: dtypeBytes(dtype, opts.kvDtype ? '--kv-dtype' : `${source}: torch_dtype`), mla, dtype };
}

export function kvBytesPerToken(shape: KvModelShape, tp = 1): number {
  const heads = shape.mla ? 1 : Math.max(1, Math.floor(shape.kvHeads / tp));
  return shape.layers * heads * shape.headDim * (shape.mla ? 1 : 2) * shape.dtypeBytes;
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
  if (kvMiB <= 0) return 0;
  return Math.floor((kvMiB * MIB) / opts.bytesPerToken);
}
