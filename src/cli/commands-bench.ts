import type { Command } from 'commander';
import { BENCH_MAX_REPEATS, BENCH_MAX_REQUESTS, DEFAULT_READY_TIMEOUT_S, SEED_MAX } from '../defaults.js';
import { collect, csv, DEVICE_HELP, MAX_S, RELEASE_HELP, type Declare } from './args.js';

// bench and its stored-result subcommands, export k8s, recipes: declared.

export function declareBenchCommands(program: Command, { lazy, intArg, numArg }: Declare): void {
  // `bench` runs an experiment (commands/bench.ts); its `show`, `compare` and `list` subcommands
  // re-render stored results (bench-report). A recipe named like a subcommand is shadowed by it.
  const bench = program
    .command('bench')
    .description('measure recipes side by side with AIPerf, each on a run that passed its validity gates')
    .argument('[recipes...]', 'built-in recipe names or YAML files (or --preset)')
    .option('--preset <name>', 'a built-in experiment: routing, agg-vs-disagg, frontend-overhead')
    .option('--variants <names>', 'only these of the preset\'s variants, comma-separated, in the preset\'s order (e.g. kv-events,round-robin)', csv)
    .option('--vary <key=v1,v2>', 'variants of each recipe by a field (repeatable), e.g. frontend.routerMode=kv,round-robin,random', collect, [])
    .option('--concurrency <list>', 'concurrent requests, comma-separated (default 1; a preset has its own)', csv)
    .option('--requests <n>', 'requests per load run (default 32; a preset has its own)', intArg('--requests', 1, BENCH_MAX_REQUESTS))
    .option('--repeats <n>', 'load runs per variant and concurrency', intArg('--repeats', 1, BENCH_MAX_REPEATS), 3)
    .option('--seed <n>', 'AIPerf\'s random seed (prompts, prefix picks); repeat r uses seed + r', intArg('--seed', 0, SEED_MAX))
    .option('--model <id>', 'override every variant\'s model')
    .option('--set <path=value>', 'override a field of every variant\'s recipe (repeatable), e.g. frontend.httpPort=9000', collect, [])
    .option('--device <device>', DEVICE_HELP)
    .option('--release <x.y.z>', RELEASE_HELP)
    .option('--no-preflight', 'skip the doctor checks before each variant\'s start')
    .option('--ready-timeout <seconds>', 'readiness deadline of each variant\'s run', numArg('--ready-timeout', 0, MAX_S), DEFAULT_READY_TIMEOUT_S)
    .option('--plot <file>', 'also draw the results to FILE.svg or FILE.png')
    .option('--json', 'one JSON document (the stored result) at the end')
    .action(lazy(() => import('../commands/bench.js')));
  declareBenchStored(bench, lazy);

  program
    .command('export')
    .description('hand a recipe to another system')
    .command('k8s')
    .description('write the recipe as a DynamoGraphDeployment for Dynamo\'s Kubernetes operator')
    .argument('[recipe]', 'built-in recipe name or YAML file', 'agg')
    .option('--model <id>', 'override the recipe\'s model')
    .option('--set <path=value>', 'override a recipe field (repeatable)', collect, [])
    .option('--release <x.y.z>', RELEASE_HELP)
    .option('--api <version>', 'DGD API version: v1beta1 (default) or v1alpha1')
    .option('--image <image>', 'container image (default nvcr.io/nvidia/ai-dynamo/vllm-runtime:<installed Dynamo>)')
    .option('--name <name>', 'DynamoGraphDeployment name (default: the recipe\'s)')
    .option('--namespace <ns>', 'metadata.namespace')
    .option('--replicas <role=n>', 'replicas of a role on the cluster (repeatable), e.g. agg=4', collect, [])
    .option('--hf-secret <name>', 'Secret with HF_TOKEN the pods read', 'hf-token-secret')
    .option('--no-hf-secret', 'no Secret reference (public models)')
    .option('-o, --output <file>', 'write to FILE instead of stdout')
    .option('--force', 'with -o: overwrite an existing file')
    .option('--json', 'JSON instead of YAML')
    .action(lazy(() => import('../commands/export-k8s.js')));

  const recipes = program
    .command('recipes')
    .description('list built-in recipes')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/recipes.js')));
  recipes
    .command('show')
    .description('print a recipe as YAML')
    .argument('<name>', 'built-in name or file')
    .option('--json', 'as JSON')
    .action(lazy(() => import('../commands/recipes-show.js')));
}

/** `bench show`, `bench compare`, `bench list`: stored results rendered again (no run, no clock). */
function declareBenchStored(bench: Command, lazy: Declare['lazy']): void {
  const plot = '--plot <file>';
  const plotHelp = 'also draw TTFT and throughput to FILE.svg or FILE.png';
  // `bench` itself takes --plot too, and commander gives an option both declare to the parent
  // (`bench show ID --plot x.svg` would lose it): the subcommand takes it back before its action.
  const plotFromParent = (_: Command, action: Command) => {
    const g = action.optsWithGlobals() as { plot?: string };
    if (g.plot !== undefined && action.getOptionValue('plot') === undefined) action.setOptionValue('plot', g.plot);
  };
  bench
    .command('show')
    .description('render a stored bench result again: tables, gates, plot')
    .argument('<id>', 'bench id (see: dynamo-dev bench list)')
    .option(plot, plotHelp)
    .option('--json', 'the whole stored document')
    .hook('preAction', plotFromParent)
    .action(lazy(() => import('../commands/bench-show.js')));
  bench
    .command('compare')
    .description('two stored bench results side by side, ratios against the first')
    .argument('<id-a>', 'first bench id (the ratios\' base)')
    .argument('<id-b>', 'second bench id')
    .option(plot, plotHelp)
    .option('--json', 'both stored documents: { results: [A, B] }')
    .hook('preAction', plotFromParent)
    .action(lazy(() => import('../commands/bench-compare.js')));
  bench
    .command('list')
    .description('stored bench results, newest first')
    .option('--json', 'one JSON document')
    .action(lazy(() => import('../commands/bench-list.js')));
}
