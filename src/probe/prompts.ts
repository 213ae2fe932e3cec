import { mulberry32 } from './random.js';

// Probe prompts: N shared prefixes of about --prefix-tokens tokens, each followed by a tail that
// differs on every send. Words are common, short, lower-case English words: a BPE tokenizer (Qwen,
// Llama, GPT) encodes each with its leading space as one token, so W words ~ W tokens. The exact
// count does not matter: hits are judged against the prompt_tokens the frontend reports.

const WORDS = (
  'time year people way day man thing woman life child world school state family student group ' +
  'country problem hand part place case week company system program question work number night point ' +
  'home water room mother area money story fact month lot right study book eye job word business ' +
  'issue side kind head house service friend father power hour game line end member law car city ' +
  'name team minute idea kid body back parent face others level office door health person art war ' +
  'history party result change morning reason research girl guy moment air teacher force education ' +
  'foot boy age policy music market sense nation plan college interest death experience effect use ' +
  'class control care field development role effort rate heart drug show leader light voice wife ' +
  'police mind price report decision son view relationship town road arm difference value building ' +
  'action model season society tax director position player record paper space ground form event ' +
  'official matter center couple site project activity star table need court oil situation cost ' +
  'industry figure street image phone data picture practice piece land product doctor wall patient ' +
  'worker news test movie north love support technology step baby computer type attention film tree ' +
  'source organization hair window evidence population site river summer network fire stone bridge'
).split(' ');

export interface ProbePrompts {
  /** A short tag unique to this probe run, so an earlier run's cache never looks like a hit. */
  tag: string;
  /** Words (~ tokens) in each prefix. */
  prefixWords: number;
  /** Prefix texts, index = prefix number. */
  prefixes: string[];
  /** The full prompt of send `repeat` (0 = first send) of prefix `prefix`. */
  prompt(prefix: number, repeat: number): string;
  /** Words in the tail of that send (the prompt's words minus the prefix's). */
  tailWords(prefix: number, repeat: number): number;
}

const TAIL_WORDS = 12;

function words(count: number, rng: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(WORDS[Math.floor(rng() * WORDS.length)]);
  return out;
}

/**
 * `tag` (default: the seed in base 36) opens every prefix. The command gives each run a fresh one
 * even when --seed repeats the words and the order: a rerun against the same frontend must start
 * cold, not hit the blocks the previous run left in the workers' caches.
 */
export function buildPrompts(o: { prefixes: number; prefixTokens: number; seed: number; tag?: string }): ProbePrompts {
  const tag = o.tag ?? (o.seed >>> 0).toString(36);
  const prefixes: string[] = [];
  for (let p = 0; p < o.prefixes; p++) {
    // The header makes prefixes differ from their first token, so no two share a KV block.
    const header = `Document ${p + 1} of probe ${tag}:`.split(' ');
    const body = words(Math.max(0, o.prefixTokens - header.length), mulberry32(o.seed ^ Math.imul(p + 1, 0x9e3779b1)));
    prefixes.push([...header, ...body].join(' '));
  }
  // Stryker disable next-line Regex: equivalent; prompts are joined with single spaces, so /\s/ splits them the same
  const prefixWords = prefixes.length ? prefixes[0].split(/\s+/).length : 0;
  const tail = (p: number, r: number): string => {
    const rng = mulberry32(o.seed ^ Math.imul(p + 1, 0x85ebca6b) ^ Math.imul(r + 1, 0xc2b2ae35));
    return `Question ${r + 1}: ${words(TAIL_WORDS, rng).join(' ')}. Answer in one word.`;
  };
  return {
    tag,
    prefixWords,
    prefixes,
    prompt: (p, r) => `${prefixes[p]}\n\n${tail(p, r)}`,
    // Stryker disable next-line Regex: equivalent; the tail is joined with single spaces, so /\s/ splits it the same
    tailWords: (p, r) => tail(p, r).split(/\s+/).length,
  };
}
