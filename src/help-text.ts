import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

// What `--help` adds under commander's usage: examples a person can paste, and where the docs
// are (the package ships docs/, so the path works offline and matches the installed version).

const DOCS = join(fileURLToPath(import.meta.url), '..', '..', 'docs');

const EXAMPLES: Record<string, { lines: [string, string][]; doc: string }> = {
  doctor: {
    lines: [
      ['dynamo-dev doctor', 'check this machine for the default recipe (agg)'],
      ['dynamo-dev doctor --recipe disagg-same-gpu', 'check for the recipe you are about to start'],
      ['dynamo-dev doctor --only gpu.memory', 'one check: free GPU memory, with a picture of the plan'],
      ['dynamo-dev doctor --logs ./old-run/', 'judge logs from elsewhere'],
      ['dynamo-dev doctor --list', 'every check id'],
    ],
    doc: 'checks.md',
  },
  setup: {
    lines: [
      ['dynamo-dev setup', 'the newest Dynamo (and vLLM) this driver and GPU run; no GPU: Dynamo alone, for the mocker'],
      ['dynamo-dev setup --engine mocker', 'Dynamo alone (no vLLM, no torch), for `dynamo-dev up mocker`'],
      ['dynamo-dev setup --release 1.6.1 --dir ./venv', 'a given release, in a folder of your own'],
      ['dynamo-dev setup --dry-run', 'what it would choose and the exact commands it would run; installs nothing'],
    ],
    doc: 'setup.md',
  },
  up: {
    lines: [
      ['dynamo-dev up', 'start the default recipe (agg) and supervise it; Ctrl-C stops it'],
      ['dynamo-dev up agg-router --detach', 'return once ready; stop later with dynamo-dev teardown'],
      ['dynamo-dev up agg-router --detach --restart on-failure:3', 'a worker that dies after ready is started again, at most 3 times'],
      ['dynamo-dev up agg --model Qwen/Qwen3-0.6B --set maxModelLen=8192', 'override the model and a field'],
      ['dynamo-dev up disagg-same-gpu --dry-run', 'print the plan (processes, flags, memory) and exit'],
      ['dynamo-dev up agg --script > run.sh', 'an equivalent bash script'],
    ],
    doc: 'up.md',
  },
  teardown: {
    lines: [
      ['dynamo-dev teardown', 'stop every live run and verify nothing remains'],
      ['dynamo-dev teardown --run ID --grace 30', 'one run, 30 s between SIGTERM and SIGKILL'],
      ['dynamo-dev teardown --orphans', 'also your leftover engine processes of no live run'],
    ],
    doc: 'up.d/teardown-status-logs.md',
  },
  restart: {
    lines: [
      ['dynamo-dev restart agg-1', 'stop agg-1 of the live run and start it again; wait until the frontend counts it'],
      ['dynamo-dev restart frontend --run NAME', 'the frontend of the run started with up --name NAME'],
      ['dynamo-dev restart agg-0 --grace 30 --json', '30 s between SIGTERM and SIGKILL; one JSON document'],
    ],
    doc: 'up.d/restart-and-names.md',
  },
  status: {
    lines: [
      ['dynamo-dev status', 'live runs in full, recent ones on a line each'],
      ['dynamo-dev status --run ID', 'one run'],
      ['dynamo-dev status --json', 'for scripts'],
    ],
    doc: 'up.d/teardown-status-logs.md',
  },
  logs: {
    lines: [
      ['dynamo-dev logs', 'every log of the latest run, each line with its process name'],
      ['dynamo-dev logs agg-0 -n 50', 'the last 50 lines of one process'],
      ['dynamo-dev logs -f', 'follow until the run stops (or Ctrl-C)'],
    ],
    doc: 'up.d/teardown-status-logs.md',
  },
  diagnose: {
    lines: [
      ['dynamo-dev diagnose', 'the latest run\'s logs and exit codes'],
      ['dynamo-dev diagnose --run ID', 'another run'],
      ['dynamo-dev diagnose worker.log frontend.log.gz', 'any log files or folders'],
    ],
    doc: 'diagnose.md',
  },
  kv: {
    lines: [
      ['dynamo-dev kv Qwen/Qwen3-0.6B', 'bytes per token, tokens per GiB'],
      ['dynamo-dev kv Qwen/Qwen3-0.6B --fraction 0.38', 'KV tokens a worker at 0.38 gets (GPU size from nvidia-smi)'],
      ['dynamo-dev kv ./config.json --gpu-mib 24576 --fraction 0.9', 'a model not in the cache, another GPU'],
    ],
    doc: 'kv.md',
  },
  bench: {
    lines: [
      ['dynamo-dev bench --preset routing', 'KV routing against round-robin and random (the mocker when there is no GPU)'],
      ['dynamo-dev bench agg-router --vary frontend.routerMode=kv,round-robin --concurrency 1,4', 'variants of one recipe'],
      ['dynamo-dev bench agg disagg-same-gpu --repeats 5 --json > result.json', 'two recipes; the whole result as JSON'],
    ],
    doc: 'bench.md',
  },
  probe: {
    lines: [
      ['dynamo-dev probe', 'measure prefix-cache routing on the live run'],
      ['dynamo-dev probe --prefixes 4 --seed 1', 'a smaller, repeatable probe'],
      ['dynamo-dev probe --url http://host:8000 --model M', 'any OpenAI-compatible frontend'],
    ],
    doc: 'probe.md',
  },
  export: {
    lines: [
      ['dynamo-dev export k8s agg-router > dgd.yaml', 'the recipe as a DynamoGraphDeployment for Dynamo\'s operator'],
      ['dynamo-dev export k8s ./my-recipe.yaml --image registry.example/vllm-runtime:tag', 'your recipe with your image'],
    ],
    doc: 'export.md',
  },
  'export k8s': {
    lines: [
      ['dynamo-dev export k8s agg-router -o dgd.yaml', 'the recipe that ran here, for the cluster'],
      ['dynamo-dev export k8s agg --replicas agg=4 --namespace dynamo', 'more workers there than on one GPU'],
      ['dynamo-dev export k8s disagg-same-gpu --api v1alpha1 --no-hf-secret', 'an older operator, a public model'],
    ],
    doc: 'export.md',
  },
  'bench show': {
    lines: [
      ['dynamo-dev bench show 20261205-101500-000-routing', 'a stored result again: tables, gates'],
      ['dynamo-dev bench show 20261205-101500-000-routing --plot routing.png', 'and a picture for a report'],
    ],
    doc: 'bench.md',
  },
  'bench compare': {
    lines: [['dynamo-dev bench compare 20261205-101500-000-routing 20261206-090000-000-routing', 'yesterday against today, ratios against the first']],
    doc: 'bench.md',
  },
  'bench list': {
    lines: [['dynamo-dev bench list', 'the stored results, newest first']],
    doc: 'bench.md',
  },
  recipes: {
    lines: [
      ['dynamo-dev recipes', 'the built-in recipes'],
      ['dynamo-dev recipes show agg > my.yaml', 'a recipe to edit; start it with dynamo-dev up ./my.yaml'],
    ],
    doc: 'recipes.md',
  },
};

export function docsPath(file = ''): string {
  return file ? join(DOCS, file) : DOCS;
}

/** The Examples block and docs line of one command ('' for commands without). */
export function examplesFor(command: string): string {
  const ex = EXAMPLES[command];
  if (!ex) return '';
  // kubectl's layout: what it does as a comment, the command alone on its line (pastes as is).
  const lines = ex.lines.map(([c, what]) => `  # ${what}\n  ${c}`);
  return `\nExamples:\n${lines.join('\n\n')}\n\nDocs: ${docsPath(ex.doc)}\n`;
}

export function programFooter(): string {
  return `\nExamples:\n  dynamo-dev doctor                    # is this machine ready?\n  dynamo-dev up agg-router --detach    # start; return once ready\n  dynamo-dev probe                     # does prefix routing work?\n  dynamo-dev teardown                  # nothing left on the GPU\n\nRun dynamo-dev COMMAND --help for a command's options and examples.\nDocs: ${docsPath()}\n`;
}

/** commander's "error: unknown option '--x'" as the tool's own one line: `dynamo-dev up: unknown option ...`. */
export function toolError(commandPath: string, commanderText: string): string {
  const msg = commanderText.trim().replace(/^error:\s*/, '').replace(/\n+/g, ' ');
  return `dynamo-dev${commandPath ? ` ${commandPath}` : ''}: ${msg} (see: dynamo-dev${commandPath ? ` ${commandPath}` : ''} --help)\n`;
}
