import chalk from 'chalk';
import type { KvReport } from '../plan/kv-report.js';

// Plain-text report of `dynamo-dev kv`.

const n = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: 0 });

export function renderKvReport(r: KvReport): string {
  const s = r.shape;
  const heads = s.mla
    ? `MLA: one latent of ${s.headDim} per layer (kv_lora_rank ${s.kvLoraRank} + qk_rope_head_dim ${s.qkRopeHeadDim}), not K and V${r.tp > 1 ? `, the same on every GPU at tp ${r.tp}` : ''}`
    : `KV heads ${s.kvHeads}${r.tp > 1 ? ` (${s.kvHeadsPerGpu} per GPU at tp ${r.tp})` : ''}, head_dim ${s.headDim}`;
  const lines = [
    r.model === r.configPath ? chalk.bold(r.model) : `${chalk.bold(r.model)}  ${chalk.dim(r.configPath)}`,
    `  shape            layers ${s.layers}, ${heads}, ${s.dtype} (${s.dtypeBytes} byte${s.dtypeBytes === 1 ? '' : 's'}${s.dtypeAssumed ? ', assumed: no torch_dtype in config' : ''}${s.dtypeNote ? `; ${s.dtypeNote}` : ''})${s.mla ? '' : ', MLA no'}`,
    `  bytes per token  ${chalk.bold(n(r.bytesPerToken))}  = ${s.layers} x ${s.kvHeadsPerGpu} x ${s.headDim} x ${s.mla ? 1 : 2} x ${s.dtypeBytes}${r.tp > 1 ? ` per GPU (tp ${r.tp})` : ''}`,
    `  tokens per GiB   ${n(r.tokensPerGiB)}`,
  ];
  if (r.worker) {
    const w = r.worker;
    lines.push(
      `  worker KV        ${n(w.gpuMiB)} MiB x ${w.fraction} = ${n(w.requestedMiB)} MiB - weights ${n(w.weightsMiB)} MiB${w.weightsSource === 'files' ? ' (weight files)' : ''} - overhead ~${w.overheadMiB} MiB = ${n(w.kvMiB)} MiB`,
      `                   -> about ${chalk.bold(n(w.kvTokens))} KV tokens; ${n(w.requestsThatFit, 2)} requests of ${n(w.maxModelLen)} tokens fit${w.kvTokens < w.maxModelLen ? chalk.red(' (less than one: raise --fraction or lower the max model length)') : ''}`,
    );
  }
  if (r.request) lines.push(`  one request      ${n(r.request.tokens)} tokens = ${n(r.request.bytes)} bytes = ${n(r.request.mib, 1)} MiB of KV`);
  if (r.transfer) {
    const t = r.transfer;
    lines.push(`  transfer         ${n(t.tokens)} tokens (${n(t.bytes)} bytes) at ${n(t.bandwidthMBps, 1)} MB/s (1 MB = 10^6 bytes) = ${chalk.bold(`${n(t.ms)} ms`)}`);
  }
  return `${lines.join('\n')}\n`;
}
