import type { UcxTransport } from '../types.js';

// Pure UCX knowledge: parsers for `ucx_info -d` / `ucx_info -v` and the UCX_TLS selection rules
// (FACTS §5), so ucx.transports can tell whether NIXL's UCX backend will find an active-message
// transport.

/** The message the adapter reports when ucx_info is not on PATH (the check then may skip). */
export const UCX_INFO_NOT_FOUND = 'ucx_info not found on PATH';

/** Transports that carry active messages (am_short/am_bcopy/am_zcopy), used when ucx_info has no capability lines. */
export const KNOWN_AM_TRANSPORTS: readonly string[] = [
  'self', 'tcp', 'posix', 'sysv', 'xpmem', 'rc_verbs', 'rc_mlx5', 'dc_mlx5', 'ud_verbs', 'ud_mlx5',
];
/** Zero-copy / put-get only: cannot carry UCP's wireup and control messages. */
export const KNOWN_NO_AM_TRANSPORTS: readonly string[] = [
  'cma', 'knem', 'cuda_copy', 'cuda_ipc', 'gdr_copy', 'rocm_copy', 'rocm_ipc', 'rocm_gdr', 'ze_copy', 'ze_ipc', 'ze_gdr',
];

/** Transports that move data within one process or one device only, never to a peer process. */
const LOCAL_ONLY = new Set(['self', 'cuda_copy', 'gdr_copy', 'rocm_copy', 'ze_copy']);

/**
 * UCX_TLS aliases, from openucx/ucx src/ucp/core/ucp_context.c (`ucp_tl_aliases[]`, master
 * 6a49e00). Entries marked aux are only used for wireup, never for data or active messages.
 */
export const UCX_TLS_ALIASES: Readonly<Record<string, readonly string[]>> = {
  mm: ['posix', 'sysv', 'xpmem'],
  sm: ['posix', 'sysv', 'xpmem', 'knem', 'cma'],
  shm: ['posix', 'sysv', 'xpmem', 'knem', 'cma'],
  ib: ['rc_verbs', 'ud_verbs', 'rc_mlx5', 'ud_mlx5', 'dc_mlx5'],
  ud_v: ['ud_verbs'],
  ud_x: ['ud_mlx5'],
  ud: ['ud_mlx5', 'ud_verbs'],
  rc_v: ['rc_verbs', 'ud_verbs:aux'],
  rc_x: ['rc_mlx5', 'ud_mlx5:aux'],
  rc: ['rc_mlx5', 'ud_mlx5:aux', 'rc_verbs', 'ud_verbs:aux'],
  dc: ['dc_mlx5', 'ud_mlx5:aux'],
  dc_x: ['dc_mlx5', 'ud_mlx5:aux'],
  ugni: ['ugni_smsg', 'ugni_udt:aux', 'ugni_rdma'],
  cuda: ['cuda_copy', 'cuda_ipc', 'gdr_copy'],
  rocm: ['rocm_copy', 'rocm_ipc', 'rocm_gdr'],
  ze: ['ze_copy', 'ze_ipc', 'ze_gdr'],
};

/** Every transport name the alias table and AM tables know: the universe when ucx_info is missing. */
export const KNOWN_TRANSPORTS: readonly string[] = [...new Set([
  ...KNOWN_AM_TRANSPORTS, ...KNOWN_NO_AM_TRANSPORTS,
  // Stryker disable next-line Regex: equivalent, the alias table is constant and :aux only ever ends its entries
  ...Object.values(UCX_TLS_ALIASES).flat().map((t) => t.replace(/:aux$/, '')),
])];

/** `ucx_info -d` -> one entry per (transport, device) block. */
export function parseUcxInfoDevices(text: string): UcxTransport[] {
  const out: UcxTransport[] = [];
  let cur: (UcxTransport & { sawCaps: boolean }) | null = null;
  const flush = () => {
    if (!cur) return;
    const { sawCaps, ...t } = cur;
    // Without capability lines (older builds, "< failed to open interface >"), use the known table.
    if (!sawCaps) t.activeMessages = KNOWN_AM_TRANSPORTS.includes(t.name);
    out.push(t);
    cur = null;
  };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^\s*#/, '').trim();
    let m: RegExpExecArray | null;
    if ((m = /^Transport:\s*(\S+)/.exec(line))) {
      flush();
      cur = { name: m[1], device: '', type: null, activeMessages: false, sawCaps: false };
    } else if (/^Memory domain:/.test(line) || /^Connection manager:/.test(line)) {
      flush();
    } else if (cur && (m = /^Device:\s*(\S+)/.exec(line))) {
      cur.device = m[1];
    } else if (cur && (m = /^Type:\s*(\S+)/.exec(line))) {
      cur.type = m[1];
    } else if (cur && /^capabilities:/.test(line)) {
      cur.sawCaps = true;
    } else if (cur && /^am_(short|bcopy|zcopy):/.test(line)) {
      cur.sawCaps = true;
      cur.activeMessages = true;
    }
  }
  flush();
  return out;
}

/** `ucx_info -v` -> "1.17.0"; the leading "# " is optional. Older builds: "# UCT version=1.9.0 ...". */
export function parseUcxVersion(text: string): string | null {
  const m = /^\s*#?\s*Library version:\s*(\S+)/m.exec(text) ?? /\bversion=(\d[\w.]*)/.exec(text);
  return m ? m[1] : null;
}

/** `ucx_info -v` -> "/opt/hpcx/ucx/lib/libucs.so.0" (its "# Library path:" line), null when absent. */
export function parseUcxLibraryPath(text: string): string | null {
  const m = /^\s*#?\s*Library path:\s*(\S+)/m.exec(text);
  return m ? m[1] : null;
}

export interface TlsSpec {
  /** all: no restriction; allow: only the listed; deny: all but the listed (leading ^). */
  mode: 'all' | 'allow' | 'deny';
  entries: string[];
}

/** UCX_TLS value -> its mode and entries. Empty or unset means all. */
export function parseUcxTls(value: string | null | undefined): TlsSpec {
  let v = (value ?? '').trim();
  if (!v) return { mode: 'all', entries: [] };
  let mode: TlsSpec['mode'] = 'allow';
  if (v.startsWith('^')) {
    mode = 'deny';
    v = v.slice(1);
  }
  const entries = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (mode === 'allow' && entries.includes('all')) return { mode: 'all', entries: [] };
  return { mode, entries };
}

/** One UCX_TLS entry -> the transports it names as primary and as aux (wireup-only). */
export function expandTlsEntry(entry: string): { primary: string[]; aux: string[] } {
  // "\\name" forces the plain transport name over an alias; "name:aux" marks an aux transport.
  let e = entry.trim();
  let strict = false;
  if (e.startsWith('\\')) {
    strict = true;
    e = e.slice(1);
  }
  let auxEntry = false;
  if (e.endsWith(':aux')) {
    auxEntry = true;
    e = e.slice(0, -4);
  }
  const primary: string[] = [];
  const aux: string[] = [];
  // Stryker disable next-line ArrayDeclaration: equivalent, names below always starts with e, so [e] or [] give the same set
  const members = !strict && UCX_TLS_ALIASES[e] ? UCX_TLS_ALIASES[e] : [e];
  // A name may be both a transport and an alias (ucx matches both), e.g. tcp is only a transport.
  const names = strict ? [e] : [...new Set([e, ...members])];
  for (const m of names) {
    const isAux = m.endsWith(':aux');
    const name = m.replace(/:aux$/, '');
    if (isAux || auxEntry) aux.push(name);
    else primary.push(name);
  }
  return { primary, aux };
}

export interface TlsEvaluation {
  spec: TlsSpec;
  /** Transport names considered: from ucx_info when known, else the known table. */
  available: string[];
  /** True when `available` comes from ucx_info rather than the known table. */
  fromUcxInfo: boolean;
  /** Transports UCX_TLS leaves for data and messages. */
  enabled: string[];
  /** Enabled with active messages. */
  amTransports: string[];
  /** Enabled with active messages that reach another process (not `self`). */
  peerAmTransports: string[];
  /** Enabled transports that move data to another process (everything but self and local copies). */
  peerTransports: string[];
  /** Named in UCX_TLS (allow list) but not reported by ucx_info. */
  unknownEntries: string[];
}

/** Applies UCX_TLS to the available transports (ucp_is_resource_in_transports_list semantics). */
export function evaluateTls(tls: string | null | undefined, transports: UcxTransport[] | null): TlsEvaluation {
  const spec = parseUcxTls(tls);
  const fromUcxInfo = transports !== null && transports.length > 0;
  const available = fromUcxInfo ? [...new Set(transports!.map((t) => t.name))] : [...KNOWN_TRANSPORTS];
  const hasAm = (name: string): boolean => {
    const rows = fromUcxInfo ? transports!.filter((t) => t.name === name) : [];
    return rows.length > 0 ? rows.some((t) => t.activeMessages) : KNOWN_AM_TRANSPORTS.includes(name);
  };
  const listed = new Set<string>();
  for (const e of spec.entries) for (const n of expandTlsEntry(e).primary) listed.add(n);
  let enabled: string[];
  if (spec.mode === 'all') enabled = available;
  else if (spec.mode === 'allow') enabled = available.filter((n) => listed.has(n));
  else enabled = available.filter((n) => !listed.has(n));
  const unknownEntries = spec.mode === 'allow'
    ? spec.entries.filter((e) => expandTlsEntry(e).primary.every((n) => !available.includes(n)))
    : [];
  const amTransports = enabled.filter(hasAm);
  return {
    spec,
    available,
    fromUcxInfo,
    enabled,
    amTransports,
    peerAmTransports: amTransports.filter((n) => !LOCAL_ONLY.has(n)),
    peerTransports: enabled.filter((n) => !LOCAL_ONLY.has(n)),
    unknownEntries,
  };
}
