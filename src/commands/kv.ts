import { buildKvReport, type KvOptions } from '../plan/kv-report.js';
import { renderKvReport } from '../ui/kv-report.js';
import type { CommandContext } from './context.js';
import { EXIT } from './context.js';

// `dynamo-dev kv MODEL|CONFIG.json`: KV arithmetic from a model's config.json (offline).

export default async function kv(ctx: CommandContext, modelOrConfig: string, opts: KvOptions & { json?: boolean }): Promise<number> {
  const { findModelConfig } = await import('../host/model-config.js');
  const found = await findModelConfig(modelOrConfig, ctx.env);
  const report = buildKvReport({ model: modelOrConfig, configPath: found.path, config: found.config, weightsMiB: found.weightsMiB, opts });
  ctx.stdout.write(ctx.json ? `${JSON.stringify(report)}\n` : renderKvReport(report));
  return EXIT.ok;
}
