// Dynamo's version strings, parsed and ordered (pure): "1.6.1", "1.3.0.post1", "1.7.0.dev20261026".
// The release table (dynamo-releases.ts) and its builds (release-builds.ts) order releases with these.

export interface Parsed {
  nums: [number, number, number];
  /** A .devN / rcN / aN / bN release comes before the release it leads to. */
  pre: boolean;
}

/** "1.6.1", "1.3.0.post1", "1.7.0.dev20261026", "v1.6.0rc2" -> parts; null when not a version. */
export function parseVersion(v: string): Parsed | null {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(.*)$/.exec(v.trim());
  if (!m) return null;
  // Stryker disable next-line StringLiteral: the (.*) group always takes part in a match (maybe empty), so the fallback is never used
  const rest = m[4] ?? '';
  return { nums: [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)], pre: /^[.-]?(dev|a|b|rc|alpha|beta)/i.test(rest) };
}

/** Sign of a - b; pre-releases sort before their release; an unparsable version sorts first. */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return pa ? 1 : pb ? -1 : 0;
  // Stryker disable next-line EqualityOperator: nums has 3 entries; index 3 is undefined on both sides and compares equal
  for (let i = 0; i < 3; i++) if (pa.nums[i] !== pb.nums[i]) return pa.nums[i] - pb.nums[i];
  return (pa.pre ? 0 : 1) - (pb.pre ? 0 : 1);
}

/**
 * Whether an installed release is the one a user asked for with `--release`: "1.4.2" is 1.4.2
 * (and "1.3.0" is 1.3.0.post1, a re-upload of it); "1.4" is any 1.4.x. A pre-release is only
 * ever asked for by its own name.
 */
export function sameRelease(want: string, have: string): boolean {
  if (want === have) return true;
  const w = parseVersion(want);
  const h = parseVersion(have);
  if (!w || !h || w.pre || h.pre) return false;
  const parts = /^v?\d+\.\d+$/.test(want.trim()) ? 2 : 3;
  return w.nums.slice(0, parts).every((n, i) => n === h.nums[i]);
}
