// Finds a fixed set of ASCII needles in a byte buffer, in one pass over the bytes (pure). This is
// the scan's prefilter: a line holding no needle cannot match any signature, and the needles a line
// holds say which signatures to try on it.
//
// Why not V8's regex over a latin1 view of the bytes (what the scan did until round 6): on a
// failure-dense log the two alternations cost 75-108 ms per 50 MB per thread, decoding the bytes to
// strings another ~25 ms plus their garbage, and a candidate line was then searched again, needle by
// needle, to learn which signatures to try. A Wu-Manber search over the bytes (a window that skips
// ahead by a table of byte pairs) was faster, ~60 ms, but each step waits for the one before.
//
// The method here reads the buffer as 32-bit words at every 4th byte, each read independent of the
// one before (so the processor overlaps them: ~20 ms per 50 MB of ordinary log text). A needle of
// at least 7 bytes, wherever it starts, holds a whole aligned word at one of 4 consecutive offsets of
// its own; those 4 words (and the bytes after each) are its fingerprints, kept in a table. An
// aligned word found in the table is then checked against the needle in full. Which 4 offsets a
// needle uses is chosen to be rare in ordinary log lines (`typical`), which only matters for speed.

/** Bytes in a word; a needle must be at least 2 * WORD - 1 bytes to hold a whole aligned word wherever it starts. */
const WORD = 4;
export const MIN_NEEDLE = 2 * WORD - 1;
/** Bits of the fingerprint hash (a 64 Kibit table: 8 KiB, stays in the first-level cache). */
const HASH_BITS = 16;
const GOLDEN = 0x9e3779b1 | 0;

export interface Needle {
  text: string;
  /** Bits a match reports (the scanner's signature bits). */
  mask: number;
}

/** Where a search found needles (reused from search to search). */
export interface Matches {
  /** Where each match starts, as an index into the searched buffer. */
  at: Int32Array;
  bits: Int32Array;
}

export function newMatches(size = 1024): Matches {
  return { at: new Int32Array(size), bits: new Int32Array(size) };
}

/** Words as an aligned read gives them on this machine are little-endian (the WebAssembly copy of the search reads little-endian words). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** The 4 bytes at `at` as one number, as an aligned read of the buffer gives them on this machine. */
const wordAt = (b: Buffer, at: number) => (LITTLE_ENDIAN ? b.readInt32LE(at) : b.readInt32BE(at));

// Stryker disable next-line ArithmeticOperator: equivalent, a shift count is taken mod 32 (48 is 16)
const hash = (word: number) => Math.imul(word, GOLDEN) >>> (32 - HASH_BITS);

/** The word of `bytes[at, at + n)` followed by zero bytes (n < 4: a needle's last bytes), and the mask of the bytes it covers. */
function partialWord(bytes: Buffer, at: number, n: number): [word: number, mask: number] {
  const b = Buffer.alloc(WORD);
  const m = Buffer.alloc(WORD);
  for (let i = 0; i < Math.min(n, WORD); i++) {
    b[i] = bytes[at + i];
    m[i] = 0xff;
  }
  return [wordAt(b, 0), wordAt(m, 0)];
}

/** NeedleSearch's tables (see its fields). */
export interface NeedleTables {
  seen: Int32Array;
  head: Int32Array;
  chain: Int32Array;
  word: Int32Array;
  after: Int32Array;
  afterMask: Int32Array;
  needle: Int32Array;
  offset: Int32Array;
  bytes: Uint8Array;
  starts: Int32Array;
  lengths: Int32Array;
  masks: Int32Array;
}

export class NeedleSearch {
  /** Bit h: some fingerprint hashes to h. */
  // Stryker disable next-line ArithmeticOperator: equivalent, a bigger table holds the same bits
  private readonly seen = new Int32Array(1 << (HASH_BITS - 5));
  /** First fingerprint with hash h (-1: none), then the next with the same hash. */
  private readonly head = new Int32Array(1 << HASH_BITS).fill(-1);
  private readonly chain: Int32Array;
  /** Per fingerprint: its word, the needle bytes in the word after it (and which bytes those are), its needle and offset in the needle. */
  private readonly word: Int32Array;
  private readonly after: Int32Array;
  private readonly afterMask: Int32Array;
  private readonly needle: Int32Array;
  private readonly offset: Int32Array;
  /** Per needle: where its bytes start in `bytes`, its length and its bits. */
  private readonly bytes: Uint8Array;
  private readonly starts: Int32Array;
  private readonly lengths: Int32Array;
  private readonly masks: Int32Array;

  /**
   * `typical`: ordinary log text; each needle's fingerprints are chosen among those it holds least
   * (rarestWindow). `windows`: those choices made in advance (needle-windows.ts: choosing them costs
   * ~5 ms at every start of every thread); a needle without one, or with one that does not fit it,
   * is chosen from `typical`. Only speed depends on the choice, never a match.
   */
  // Stryker disable next-line StringLiteral: speed only, the default text only steers which fingerprints are taken
  constructor(needles: readonly Needle[], typical = '', windows: Readonly<Record<string, number>> = {}) {
    for (const [i, n] of needles.entries()) {
      // One byte per character and no newline: a match is those exact bytes, inside one line.
      if (!/^[\x20-\x7e]+$/.test(n.text) || n.text.length < MIN_NEEDLE) {
        throw new Error(`NeedleSearch: needle ${i} (${JSON.stringify(n.text)}) must be printable ASCII of at least ${MIN_NEEDLE} characters`);
      }
    }
    const encoded = needles.map((n) => Buffer.from(n.text, 'latin1'));
    this.bytes = Buffer.concat(encoded);
    this.starts = new Int32Array(needles.length);
    this.lengths = Int32Array.from(encoded, (b) => b.length);
    this.masks = Int32Array.from(needles, (n) => n.mask);
    const count = needles.length * WORD;
    this.chain = new Int32Array(count);
    this.word = new Int32Array(count);
    this.after = new Int32Array(count);
    this.afterMask = new Int32Array(count);
    this.needle = new Int32Array(count);
    this.offset = new Int32Array(count);
    let counts: WordCounts | undefined;
    let at = 0;
    let f = 0;
    for (const [k, b] of encoded.entries()) {
      this.starts[k] = at;
      at += b.length;
      const given = windows[needles[k].text];
      const first = Number.isInteger(given) && given >= 0 && given + MIN_NEEDLE <= b.length ? given : rarestWindow(needles[k].text, typical, (counts ??= wordCounts(typical)));
      for (let o = first; o < first + WORD; o++, f++) {
        const word = wordAt(b, o);
        const [after, afterMask] = partialWord(b, o + WORD, b.length - o - WORD);
        const h = hash(word);
        this.seen[h >>> 5] |= 1 << (h & 31);
        this.word[f] = word;
        this.after[f] = after;
        this.afterMask[f] = afterMask;
        this.needle[f] = k;
        this.offset[f] = o;
        this.chain[f] = this.head[h];
        this.head[h] = f;
      }
    }
  }

  /** The tables, for the WebAssembly copy of `search` (needle-scan.ts), which reads the same ones. */
  tables(): NeedleTables {
    const { seen, head, chain, word, after, afterMask, needle, offset, bytes, starts, lengths, masks } = this;
    return { seen, head, chain, word, after, afterMask, needle, offset, bytes, starts, lengths, masks };
  }

  /**
   * Finds every needle in buf[start, end): writes where each starts to `out.at` and its bits to
   * `out.bits` (growing them as needed) and returns how many there are. Matches come in the order
   * of the aligned words they were found by; one may start before a match reported earlier, but it
   * then holds that match's start, so it is in the same line: lines come in order. No callback: a
   * new closure per call made V8 throw the optimised loop away ("wrong call target").
   */
  search(buf: Buffer, start: number, end: number, out: Matches): number {
    const { seen, head, chain, word, after, afterMask, needle, offset, bytes, starts, lengths, masks } = this;
    // Word w of `words` is bytes [w * 4 - base, w * 4 - base + 4) of buf.
    const base = buf.byteOffset;
    const words = new Int32Array(buf.buffer, 0, (buf.byteOffset + buf.length) >>> 2);
    const firstWord = (base + start + WORD - 1) >>> 2;
    const endWord = (base + end) >>> 2; // words wholly before `end`
    let n = 0;
    // Stryker disable next-line EqualityOperator: equivalent, a needle holding the word at endWord would end past `end`, and is refused below
    for (let w = firstWord; w < endWord; w++) {
      const x = words[w];
      const h = hash(x);
      // Speed only, from here to the full check: the table, the next word and the fingerprint's own
      // word rule candidates out early; the full comparison decides every match.
      // Stryker disable next-line ConditionalExpression: speed only (above)
      if ((seen[h >>> 5] & (1 << (h & 31))) === 0) continue;
      // The next word, when it is wholly inside.
      // Stryker disable next-line ConditionalExpression: speed only (above)
      const y = w + 1 < endWord ? words[w + 1] : -1;
      for (let f = head[h]; f !== -1; f = chain[f]) {
        // Stryker disable next-line ConditionalExpression,LogicalOperator: speed only (above)
        if (word[f] !== x || (y !== -1 && (y & afterMask[f]) !== after[f])) continue;
        const k = needle[f];
        const at = w * WORD - base - offset[f];
        const len = lengths[k];
        if (at < start || at + len > end) continue;
        const from = starts[k];
        let j = 0;
        while (j < len && buf[at + j] === bytes[from + j]) j++;
        if (j !== len) continue;
        if (n === out.at.length) grow(out);
        out.at[n] = at;
        out.bits[n] = masks[k];
        n++;
      }
    }
    return n;
  }
}

/**
 * The first of the 4 consecutive offsets whose fingerprints `typical` holds least often (a word
 * counts once, a word followed by the needle's next 4 bytes 100 times: those reach the full
 * check). The earliest among equals.
 */
export function rarestWindow(needle: string, typical: string, counts = wordCounts(typical)): number {
  const bytes = Buffer.from(needle, 'latin1');
  // What each offset's fingerprint costs; a window costs its 4 offsets' sum.
  const cost: number[] = [];
  for (let o = 0; o + WORD <= needle.length; o++) {
    const word = wordAt(bytes, o);
    const next = needle.length - o - WORD;
    // Stryker disable next-line EqualityOperator: equivalent, with exactly 4 bytes left both ways count the same 8 bytes
    const longer = next >= WORD
      ? counts.pairs.get(pairKey(word, wordAt(bytes, o + WORD))) ?? 0
      // Near its end a needle's next word is shorter than 4 bytes: counted in the text itself.
      : occurrences(typical, needle.slice(o));
    cost.push((counts.words.get(word) ?? 0) + 100 * longer);
  }
  let best = 0;
  let bestCost = Infinity;
  for (let first = 0; first + MIN_NEEDLE <= needle.length; first++) {
    const c = cost[first] + cost[first + 1] + cost[first + 2] + cost[first + 3];
    if (c < bestCost) {
      bestCost = c;
      best = first;
    }
  }
  return best;
}

interface WordCounts {
  /** How often each 4-byte word occurs in the text, at any offset. */
  words: Map<number, number>;
  /** How often each word followed by a given next word occurs (keyed by pairKey: a hash, so two pairs may share a count; only speed depends on it). */
  pairs: Map<number, number>;
}

const pairKey = (a: number, b: number) => (Math.imul(a, GOLDEN) ^ b) | 0;

/** WordCounts of a text (numbers, not substrings: building them is most of what choosing windows costs). */
function wordCounts(text: string): WordCounts {
  const bytes = Buffer.from(text, 'latin1');
  const words = new Map<number, number>();
  const pairs = new Map<number, number>();
  for (let at = 0; at + WORD <= bytes.length; at++) {
    const w = wordAt(bytes, at);
    words.set(w, (words.get(w) ?? 0) + 1);
    if (at + 2 * WORD <= bytes.length) {
      const k = pairKey(w, wordAt(bytes, at + WORD));
      pairs.set(k, (pairs.get(k) ?? 0) + 1);
    }
  }
  return { words, pairs };
}

function occurrences(text: string, s: string): number {
  let n = 0;
  for (let at = text.indexOf(s); at !== -1; at = text.indexOf(s, at + 1)) n++;
  return n;
}

function grow(out: Matches): void {
  const at = new Int32Array(out.at.length * 2);
  const bits = new Int32Array(at.length);
  at.set(out.at);
  bits.set(out.bits);
  out.at = at;
  out.bits = bits;
}
