import type { LoadShape } from './presets.js';

// AIPerf's command line for one load run: pure. Flags as aiperf 0.13.0 defines them
// (aiperf/config/flags/cli_config.py; FACTS §9 has the command seen working against the mocker):
//   --isl/--osl            synthetic input tokens (the user prompt) and output tokens per answer
//   --isl-stddev 0         every prompt the same length (no spread from the prompt sizes)
//   --num-prefix-prompts N --prefix-prompt-length L
//                          a pool of N shared prefixes of L tokens, one prepended to each prompt,
//                          picked at random per entry: the routing experiment's shared prefixes
//                          with a varying tail
//   --num-dataset-entries  distinct prompts: one per request, so no two requests are identical
//   --random-seed          the same prompts and picks on every variant
//   --streaming            first-token and inter-token times; chat streaming asks for usage
//                          (stream_options.include_usage, aiperf/endpoints/openai_completions.py),
//                          which carries the frontend's cached_tokens
//   --use-server-token-count
//                          output tokens as the server's usage counts them, not by re-tokenizing
//                          the answer's text (the mocker's text re-tokenizes to other counts)
//   --extra-inputs ignore_eos:true
//                          answers run to --osl tokens (vLLM and the mocker honour it)
//   --no-server-metrics    no scraping of /metrics during the load
//   --ui-type none         plain log output (its log goes to the run's aiperf.log)

export interface LoadRun {
  url: string;
  model: string;
  /** Tokenizer AIPerf sizes prompts with: a hub id (from the HF cache) or a local folder. */
  tokenizer: string;
  concurrency: number;
  requests: number;
  seed: number;
  shape: LoadShape;
  /** Folder AIPerf writes its exports into. */
  artifactDir: string;
}

/** The arguments after the program (`aiperf` or `python -m aiperf`). */
export function aiperfArgs(r: LoadRun): string[] {
  const args = [
    'profile',
    '--model', r.model,
    '--tokenizer', r.tokenizer,
    '--url', r.url,
    '--endpoint-type', 'chat',
    '--streaming',
    '--concurrency', String(r.concurrency),
    '--request-count', String(r.requests),
    '--num-dataset-entries', String(r.requests),
    '--isl', String(r.shape.inputTokens),
    '--isl-stddev', '0',
    '--osl', String(r.shape.outputTokens),
    '--random-seed', String(r.seed),
    '--use-server-token-count',
    '--extra-inputs', 'ignore_eos:true',
  ];
  if (r.shape.prefixes) {
    args.push('--num-prefix-prompts', String(r.shape.prefixes.count), '--prefix-prompt-length', String(r.shape.prefixes.tokens));
  }
  args.push('--no-server-metrics', '--artifact-dir', r.artifactDir, '--ui-type', 'none');
  return args;
}

/**
 * AIPerf's environment for a tokenizer. A local folder (the embedded model's) is loaded without
 * the network when online, but with HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE set AIPerf 0.13.0 takes
 * every name for a hub id (aiperf/common/tokenizer.py, _load_from_hub -> _from_pretrained_local ->
 * snapshot_download: "Repo id must be in the form 'repo_name'"; seen with `bench mocker`): for a
 * folder those two are left out. A hub id keeps them (offline stays offline). Pure.
 */
export function aiperfEnv(env: NodeJS.ProcessEnv, tokenizer: string): NodeJS.ProcessEnv {
  if (!tokenizer.startsWith('/')) return env;
  const { HF_HUB_OFFLINE: _h, TRANSFORMERS_OFFLINE: _t, ...rest } = env;
  return rest;
}
