import type { Command } from 'commander';
import { MAX_S, type Declare } from './args.js';

// The commands that look at runs and models, declared: status, logs, diagnose, kv, probe.

export function declareInspectCommands(program: Command, { lazy, intArg, numArg }: Declare): void {
  program
    .command('status')
    .description('live and recent runs')
    .option('--run <id|name>', 'only this run')
    .option('--all', 'include every recorded run, not just the recent ones')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/status.js')));

  program
    .command('logs')
    .description('print a run\'s logs')
    .argument('[process]', 'process name (frontend, agg-0, ...); all when omitted')
    .option('--run <id|name>', 'the run (default: the latest)')
    .option('-f, --follow', 'keep printing as the logs grow')
    .option('-n, --lines <n>', 'last N lines of each log', intArg('--lines', 0))
    .option('--json', 'NDJSON lines')
    .action(lazy(() => import('../commands/logs.js')));

  program
    .command('diagnose')
    .description('scan log files or folders for known failure signatures (default: the latest run\'s logs)')
    .argument('[path...]', 'log files or folders (.gz too); none: the latest run\'s logs')
    .option('--run <id|name>', 'the logs of this run (default: the latest)')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/diagnose.js')));

  program
    .command('kv')
    .description('KV-cache arithmetic from a model\'s config.json')
    .argument('<model-or-config>', 'a model id in the HF cache, or a path to config.json')
    .option('--gpu-mib <n>', 'GPU total memory in MiB', numArg('--gpu-mib', 1))
    .option('--fraction <f>', 'gpu-memory-utilization of the worker', numArg('--fraction', 0))
    .option('--weights-mib <n>', 'model weights in MiB (default: the cached weight files)', numArg('--weights-mib', 0))
    .option('--tokens <n>', 'tokens of one request', intArg('--tokens', 1))
    .option('--bandwidth <mbps>', 'KV transfer bandwidth in MB/s', numArg('--bandwidth', 0))
    .option('--tp <n>', 'tensor-parallel size', intArg('--tp', 1), 1)
    .option('--kv-dtype <dtype>', 'KV cache dtype (e.g. fp8); default the model\'s')
    .option('--max-model-len <n>', 'request length for "how many fit" (with --gpu-mib)', intArg('--max-model-len', 1), 4096)
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/kv.js')));

  program
    .command('probe')
    .description('measure prefix-cache routing on a live frontend')
    .option('--url <url>', 'frontend URL (default: the live run\'s)')
    .option('--run <id|name>', 'probe this run\'s frontend (default: the live run)')
    .option('--model <id>', 'model to request (default: the first listed)')
    .option('--prefixes <n>', 'shared prefixes', intArg('--prefixes', 1), 12)
    .option('--repeats <n>', 'sends per prefix', intArg('--repeats', 2), 6)
    .option('--prefix-tokens <n>', 'approximate tokens per prefix', intArg('--prefix-tokens', 1), 1500)
    .option('--timeout <seconds>', 'per-request timeout', numArg('--timeout', 1, MAX_S), 60)
    .option('--seed <n>', 'seed of the prompts\' words and the send order, to repeat a probe (default: a new one each run)', intArg('--seed', 0))
    .option('--block-size <n>', 'tokens per KV block of the workers, to judge hits in whole blocks (default: the live run\'s)', intArg('--block-size', 1))
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/probe.js')));
}
