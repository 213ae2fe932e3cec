import { buildKvReport, type KvOptions } from '../plan/kv-report.js';
import { renderKvReport } from '../ui/kv-report.js';
import type { CommandContext } from './context.js';
import { EXIT } from './context.js';

// `dynamo-dev kv MODEL|CONFIG.json`: KV arithmetic from a model's config.json (offline).

export default async function kv(ctx: CommandContext, modelOrConfig: string, opts: KvOptions & { json?: boolean }): Promise<number> {
  const { findModelConfig } = await import('../host/hf/model-config.js');
  const found = await findModelConfig(modelOrConfig, ctx.env);
  // --fraction alone: the GPU's total is what nvidia-smi says (GPU 0, as a recipe's default).
  if (opts.fraction !== undefined && opts.gpuMib === undefined) {
    const { probeGpu } = await import('../host/gpu/nvidia-smi.js');
    const g = await probeGpu(ctx.env, 5000).catch(() => null);
    const total = g?.ok ? g.gpus.find((x) => x.index === 0)?.memoryTotalMiB ?? null : null;
    if (total === null) {
      const { UserError } = await import('../errors.js');
      throw new UserError('--gpu-mib: needed with --fraction here (nvidia-smi gave no GPU memory total); pass the GPU\'s total MiB, e.g. 8188');
    }
    opts = { ...opts, gpuMib: total };
  }
  const report = buildKvReport({ model: modelOrConfig, configPath: found.path, config: found.config, weightsMiB: found.weightsMiB, opts });
  ctx.stdout.write(ctx.json ? `${JSON.stringify(report)}\n` : renderKvReport(report));
  return EXIT.ok;
}
