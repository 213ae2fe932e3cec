// Pure parsers for Linux /proc and /etc text. Fed raw text; the I/O lives in processes.ts,
// hf-cache.ts and ports.ts. Formats: proc(5).

export interface ProcStat {
  pid: number;
  /** The kernel's comm (15 chars at most); may itself contain spaces and parentheses. */
  comm: string;
  state: string;
  ppid: number;
  pgid: number;
  session: number;
  /** Field 22: start time in clock ticks since boot. */
  startTicks: number;
}

/**
 * /proc/PID/stat. comm (field 2) is wrapped in parentheses but may contain ") (" itself, so the
 * fields after it start at the LAST ')'.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // Number('') is 0: a line without its pid must not read as pid 0 (signalling 0 means our own group).
  const pidText = text.slice(0, open).trim();
  if (!/^\d+$/.test(pidText)) return null;
  const pid = Number(pidText);
  // Fields 3.. after the comm, walked by hand up to field 22: a scan parses thousands of these, and
  // splitting all ~50 fields with a regex was a third of a scan's CPU. Field N is at index N - 3.
  const want = [0, 1, 2, 3, 19]; // state, ppid, pgid, session, starttime
  const got: string[] = [];
  let i = close + 1;
  const n = text.length;
  for (let field = 0; field <= 19; field++) {
    while (i < n && text.charCodeAt(i) <= 32) i++; // whitespace between fields
    if (i >= n) return null; // fewer than 22 fields
    const start = i;
    while (i < n && text.charCodeAt(i) > 32) i++;
    if (want.includes(field)) got.push(text.slice(start, i));
  }
  const [state, ppid, pgid, session, startTicks] = [got[0], Number(got[1]), Number(got[2]), Number(got[3]), Number(got[4])];
  if (![ppid, pgid, session].every(Number.isInteger) || !Number.isFinite(startTicks)) return null;
  return { pid, comm: text.slice(open + 1, close), state, ppid, pgid, session, startTicks };
}

/** /proc/uptime: "12345.67 54321.00" -> seconds since boot. */
export function parseUptime(text: string): number | null {
  const n = Number(text.trim().split(/\s+/)[0]);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

export interface ProcLock {
  /** FLOCK (flock(2)), POSIX (fcntl), OFDLCK, LEASE, ... */
  kind: string;
  /** ADVISORY / MANDATORY, or the lease state. */
  mode: string;
  /** READ / WRITE (for leases also others). */
  access: string;
  /** The holder (or, when blocked, the waiter). -1 for OFD locks. */
  pid: number;
  major: number;
  minor: number;
  /** Decimal string: inode numbers can exceed 2^53. */
  inode: string;
  /** A "->" line: a process waiting for this lock, not holding it. */
  blocked: boolean;
}

/**
 * /proc/locks: `2: FLOCK  ADVISORY  WRITE 48211 08:01:7864554 0 EOF`; waiters read
 * `2: -> FLOCK  ADVISORY  WRITE 48300 08:01:7864554 0 EOF`. MAJOR and MINOR are hex (the kernel
 * prints them with %02x), the inode decimal.
 */
export function parseProcLocks(text: string): ProcLock[] {
  const out: ProcLock[] = [];
  for (const raw of text.split('\n')) {
    const m = /^\s*\d+:\s+(->\s+)?(\S+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+([0-9a-fA-F]+):([0-9a-fA-F]+):(\d+)\s/.exec(raw + ' ');
    if (!m) continue;
    out.push({
      blocked: Boolean(m[1]),
      kind: m[2],
      mode: m[3],
      access: m[4],
      pid: Number(m[5]),
      major: parseInt(m[6], 16),
      minor: parseInt(m[7], 16),
      inode: BigInt(m[8]).toString(),
    });
  }
  return out;
}

/**
 * Linux dev_t -> major/minor (glibc's gnu_dev_major/gnu_dev_minor, sys/sysmacros.h): the major
 * is bits 8-19 and 32-43, the minor bits 0-7 and 20-31.
 */
export function splitDev(dev: bigint | number): { major: number; minor: number } {
  const d = BigInt(dev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}

/** /etc/passwd -> uid -> user name. */
export function parsePasswd(text: string): Map<number, string> {
  const users = new Map<number, string>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const f = line.split(':');
    if (f.length < 3) continue;
    const uid = Number(f[2]);
    if (f[0] && Number.isInteger(uid) && !users.has(uid)) users.set(uid, f[0]);
  }
  return users;
}

export interface TcpListener {
  /** Local address as text: "0.0.0.0", "127.0.0.1", "::", "::1", "::ffff:127.0.0.1". */
  address: string;
  port: number;
  inode: string;
  uid: number;
}

const TCP_LISTEN = '0A';

/** Little-endian 32-bit words as the kernel prints them -> bytes in network order. */
function hexWordsToBytes(hex: string): number[] {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex.slice(w, w + 8);
    for (let b = 6; b >= 0; b -= 2) bytes.push(parseInt(word.slice(b, b + 2), 16));
  }
  return bytes;
}

function formatIpv6(bytes: number[]): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  // Compress the longest run of zero groups (RFC 5952).
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/**
 * /proc/net/tcp and /proc/net/tcp6: the sockets in LISTEN state (st 0A). Addresses are hex in
 * host byte order per 32-bit word (little-endian on x86/arm), ports hex in network order.
 */
export function parseProcNetTcp(text: string): TcpListener[] {
  const out: TcpListener[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
    if (f.length < 10 || !/^\d+:$/.test(f[0]) || f[3] !== TCP_LISTEN) continue;
    const [addrHex, portHex] = f[1].split(':');
    if (!addrHex || !portHex) continue;
    const bytes = hexWordsToBytes(addrHex);
    const address = bytes.length === 4 ? bytes.join('.') : formatIpv6(bytes);
    out.push({ address, port: parseInt(portHex, 16), uid: Number(f[7]), inode: f[9] });
  }
  return out;
}

/** /proc/PID/cmdline: NUL-separated argv -> one line as ps prints it (control characters as spaces). */
export function parseCmdline(raw: string): string {
  return raw.replace(/\0+$/, '').replace(/[\0-\x1f\x7f]/g, ' ');
}
