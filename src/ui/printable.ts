import { cleanText } from '../host/net/http-body.js';

// Text from a document we did not write (a stored bench result: anyone who can write the state
// directory, or copy a result in, wrote it) is made printable before a renderer sees it: escape
// sequences would otherwise set the window title, clear the screen or plant hyperlinks, and
// control characters make the SVG invalid XML. --json prints the document as stored (JSON escapes
// every control character itself).

/** Pure: the same document with every string made printable (cleanText); numbers, shape and keys untouched. */
export function printableDeep<T>(doc: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return cleanText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(doc) as T;
}
