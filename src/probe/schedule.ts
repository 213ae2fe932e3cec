import { mulberry32, shuffle } from './random.js';

// The order of sends. Round by round: every prefix's first send, then every prefix's second send,
// and so on; each round in a fresh shuffled order.
//
// Why rounds: between two sends of one prefix all the other prefixes pass once, so every worker's
// cache has to hold the whole working set, as under real traffic; sending one prefix N times in a
// row would measure only "the last request's blocks are still there".
// Why shuffled: with a fixed order and a prefix count divisible by the worker count, round-robin
// sends each prefix to the same worker every round and looks like perfect prefix routing. A
// shuffled order makes a router that ignores prefixes land at random, as in the measurements in
// FACTS §7.
// No prefix is sent twice back to back across a round boundary (that would be a trivial hit).

export interface ScheduledSend {
  prefix: number;
  /** 0 = the first send of the prefix (a cold miss by construction); 1.. are the repeats. */
  repeat: number;
}

export function buildSchedule(prefixes: number, repeats: number, seed: number): ScheduledSend[] {
  const rng = mulberry32(seed ^ 0x5bd1e995);
  const out: ScheduledSend[] = [];
  let last = -1;
  for (let r = 0; r < repeats; r++) {
    const order = shuffle(Array.from({ length: prefixes }, (_, i) => i), rng);
    if (order.length > 1 && order[0] === last) [order[0], order[1]] = [order[1], order[0]];
    for (const p of order) out.push({ prefix: p, repeat: r });
    last = order[order.length - 1] ?? -1;
  }
  return out;
}
