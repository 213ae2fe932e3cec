/** ["a", "b", "c"] -> "a, b and c" (or "a, b or c"): a list said as a person writes it. */
export function listWords(xs: readonly string[], last: 'and' | 'or' = 'and'): string {
  return xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} ${last} ${xs[xs.length - 1]}`;
}
