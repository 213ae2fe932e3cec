import type { ModelSourceFacts } from '../../host/types.js';
import { fail, pass, skip, warn, type Check, type CheckResult } from '../types.js';

// The recipe's model can be read before anything starts (issue 25: a model path that does not
// exist started the run and failed with an unknown-cause exception). A local folder holds
// config.json and a tokenizer; a hub id is cached, or the hub answers for it (never when offline).

/**
 * Tokenizer files Dynamo's own frontend reads (ai-dynamo-runtime 1.6.1, lib/llm/src/model_card.rs:
 * "Provide a supported tokenizer file (tokenizer.json, tiktoken.model, or *.tiktoken)"); without one
 * its Rust preprocessor skips the model's chat engine.
 */
const isFrontendTokenizer = (f: string) => f === 'tokenizer.json' || f === 'tiktoken.model' || f.endsWith('.tiktoken');

/**
 * Vocabulary files transformers builds a tokenizer from when tokenizer.json is absent (transformers
 * 5.17.0, models/*\/tokenization_*.py VOCAB_FILES_NAMES: vocab.json with merges.txt for BPE, vocab.txt,
 * the SentencePiece models), and Mistral's tekken.json (vLLM 0.31 tokenizer_mode mistral): vLLM's
 * worker loads these, Dynamo's frontend does not.
 */
function engineOnlyTokenizer(files: readonly string[]): string[] {
  const has = (f: string) => files.includes(f);
  const found = ['vocab.txt', 'spiece.model', 'sentencepiece.bpe.model', 'sentencepiece.model', 'spm.model', 'tokenizer.model', 'tekken.json'].filter(has);
  return has('vocab.json') && has('merges.txt') ? ['vocab.json', 'merges.txt', ...found] : found;
}

const isWeights = (f: string) => /\.(safetensors|bin|pt|pth|gguf)$/.test(f);

const download = (model: string) => `\`hf download ${model}\` (older huggingface_hub: \`huggingface-cli download ${model}\`)`;

/**
 * What a folder lacks to serve as the model. `subject`: how the summary names it ("model folder
 * ./m", "model Qwen/X: its cached snapshot /..."); `fix`: how to get a good folder instead.
 */
function judgeFolder(subject: string, dir: string, files: readonly string[], engine: string, fix: string, evidence: Record<string, unknown>): CheckResult {
  const listing = `files there: ${files.slice(0, 12).join(', ') || '(none)'}${files.length > 12 ? ', ...' : ''}`;
  if (!files.includes('config.json')) return fail(`${subject} has no config.json`, fix, [listing], evidence);
  const frontend = files.filter(isFrontendTokenizer);
  const engineOnly = engineOnlyTokenizer(files);
  if (frontend.length === 0 && engineOnly.length === 0) {
    return fail(`${subject} has config.json but no tokenizer (tokenizer.json, or tokenizer_config.json with its vocab files)`, `copy the model's tokenizer.json and tokenizer_config.json into ${dir}; or ${fix}`, [listing], evidence);
  }
  const noWeights = engine !== 'mocker' && !files.some(isWeights)
    ? ['no weight file (*.safetensors, *.bin) at its top level: vLLM finds no weights unless the recipe loads them another way'] : [];
  if (frontend.length === 0) {
    return warn(
      `${subject} has only ${engineOnly.join(' + ')} as tokenizer: vLLM loads it, Dynamo's frontend needs tokenizer.json`,
      `write tokenizer.json beside it: python3 -c "from transformers import AutoTokenizer as T; T.from_pretrained('${dir}').save_pretrained('${dir}')"`,
      noWeights,
      evidence,
    );
  }
  if (noWeights.length > 0) return warn(`${subject} has config.json and ${frontend[0]} but no weights`, `check that ${dir} holds the model's weights`, noWeights, evidence);
  return pass(`${subject} has config.json and ${frontend[0]}`, evidence);
}

/** The verdict on where the model comes from. Pure. */
export function judgeModelSource(f: ModelSourceFacts, engine: string): CheckResult {
  if (f.kind === 'embedded') return pass(`model ${f.model} is dynamo-dev's embedded model (${f.dir}): nothing to download`, { ...f });

  if (f.kind === 'local') {
    const evidence = { ...f };
    const fixPath = 'fix the path (the recipe\'s model, or --model PATH) to a folder with config.json and tokenizer.json, or give a hub id such as Qwen/Qwen3-0.6B';
    if (f.type === 'missing') return fail(`model path ${f.model} does not exist${f.path !== f.model ? ` (${f.path})` : ''}`, fixPath, [], evidence);
    if (f.type === 'unreadable') return fail(`model path ${f.model} cannot be read (${f.error})`, `make ${f.path} readable by this user, or ${fixPath.replace(/^fix/, 'change')}`, [], evidence);
    if (f.type === 'file') {
      // vLLM loads a single GGUF file given as the model (its tokenizer from --tokenizer or the file).
      if (f.path.endsWith('.gguf')) return pass(`model ${f.model} is a GGUF file`, evidence);
      return fail(`model path ${f.model} is a file, not a model folder (config.json and a tokenizer)`, fixPath, [], evidence);
    }
    return judgeFolder(`model folder ${f.model}${f.path !== f.model ? ` (${f.path})` : ''}`, f.path, f.files, engine, fixPath, evidence);
  }

  const evidence = { ...f };
  if (f.snapshotDir) {
    if (!f.offline) return pass(`model ${f.model} is in the Hugging Face cache (${f.snapshotDir})`, evidence);
    // Offline, the cache is all the worker gets: what the snapshot lacks cannot be fetched.
    const fixOffline = `${download(f.model)} with the network (HF_HUB_OFFLINE unset), then run up again`;
    const verdict = judgeFolder(`model ${f.model}: its cached snapshot ${f.snapshotDir}`, f.snapshotDir, f.snapshotFiles, engine, fixOffline, evidence);
    if (verdict.status === 'pass') return pass(`model ${f.model} is in the Hugging Face cache (${f.snapshotDir}), as ${f.offline} needs`, evidence);
    if (verdict.status === 'warn' && / but no weights$/.test(verdict.summary)) {
      return fail(`model ${f.model}: its cached snapshot ${f.snapshotDir} has no weights and ${f.offline} forbids downloading them`, fixOffline, verdict.details, evidence);
    }
    return verdict.status === 'fail' ? fail(`${verdict.summary}, and ${f.offline} forbids downloading the rest`, fixOffline, verdict.details, evidence) : verdict;
  }

  const where = `not in the Hugging Face cache (${f.cacheRoot})`;
  if (f.offline) {
    return fail(`model ${f.model} is ${where} and ${f.offline} forbids downloading it`, `${download(f.model)} with the network (HF_HUB_OFFLINE unset), or point HF_HUB_CACHE at a cache that holds it`, [], evidence);
  }
  const hub = f.hub;
  if (!hub) return skip(`model ${f.model} is ${where}; the hub was not asked`, evidence);
  if (hub.status !== null && hub.status >= 200 && hub.status < 400) {
    return pass(`model ${f.model} is ${where}; the hub has it (${f.endpoint}): the first worker downloads it`, evidence);
  }
  if (hub.status === 404) {
    return fail(`model ${f.model} is ${where} and the hub does not know it (HEAD ${hub.url}: 404)`, 'check the id (ORG/NAME, as on https://huggingface.co/models), or give a local folder', [], evidence);
  }
  if (hub.status === 401 || hub.status === 403) {
    return warn(
      `model ${f.model} is ${where}; the hub answers ${hub.status}: a private or gated model (or no such id)`,
      'accept the model\'s license on its page and export HF_TOKEN (or run `hf auth login`); check the id',
      [`HEAD ${hub.url}: ${hub.status}`],
      evidence,
    );
  }
  if (hub.status !== null) {
    return warn(`model ${f.model} is ${where}; the hub answered ${hub.status}, so whether it can be downloaded is unknown`, `${download(f.model)} before up`, [`HEAD ${hub.url}: ${hub.status}`], evidence);
  }
  if (f.proxy) {
    // Our HEAD goes direct; huggingface_hub in the worker goes through the proxy.
    return warn(`model ${f.model} is ${where}; the hub did not answer a direct request (${hub.error}) and ${f.proxy} is set: not checked through the proxy`, `${download(f.model)} before up`, [`HEAD ${hub.url}: ${hub.error}`], evidence);
  }
  return fail(
    `model ${f.model} is ${where} and the hub cannot be reached (${f.endpoint}: ${hub.error})`,
    `${download(f.model)} where the hub is reachable, into this cache (or set HF_ENDPOINT to a mirror you can reach)`,
    [`HEAD ${hub.url}: ${hub.error}`],
    evidence,
  );
}

/** The one line `up` and `bench` print when the model fails (exit 2): the verdict and its fix. Pure. */
export function modelFailureLine(r: CheckResult): string {
  return `${r.summary}; fix: ${r.fix}`;
}

const check: Check = {
  id: 'model.available',
  title: 'Model files or hub reachable',
  async run(facts) {
    return judgeModelSource(await facts.modelSource(), facts.recipe.engine);
  },
};

export default check;
