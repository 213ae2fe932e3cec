// Pure reading of what src/host/ucx/nixl-probe.py printed: its result line, UCX's protocol tables
// (UCX_PROTO_INFO=y) and the error lines of UCX and NIXL. No I/O.
//
// UCX's table format (openucx/ucx, master 9466d10): each table opens with the endpoint's config
// name `<context> self|intra-node|inter-node cfg#N` (src/ucp/core/ucp_ep.c ucp_ep_config_name),
// then the operation (`remote memory write by ucp_put*`, src/ucp/proto/proto.c
// ucp_operation_descs, plus ` from <mem> memory to <mem>`), then rows `| Range | Description |
// Config |`. A range is `A..B` or `A` with K/M/G suffixes and `inf` (src/ucs/sys/string.c
// ucs_memunits_range_str); a config spread over lanes reads `52% on tcp/lo and 48% on tcp/eth0`
// (src/ucp/proto/proto_multi.c). Every line carries UCX's `[time] [host:pid:tid]` prefix, so the
// two processes' interleaved tables are told apart by pid.

/** The line the probe prints last, before its JSON. */
export const NIXL_PROBE_MARKER = '@@dynamo-dev-nixl@@';

/** What nixl-probe.py reports about itself (its JSON line). */
export interface NixlProbeReport {
  role?: string;
  pid?: number;
  nixl?: string | null;
  ucpPath?: string | null;
  ucxVersion?: string | null;
  mem?: 'DRAM' | 'VRAM';
  memFallback?: string | null;
  targetMem?: 'DRAM' | 'VRAM';
  writeMs?: number[];
  targetWriteMs?: number[] | null;
  verified?: number;
  /** Where it stopped: import, agent, register, metadata, transfer, receive, done. */
  stage?: string;
  error?: string;
  peerFailed?: boolean;
  peerStage?: string | null;
  peerError?: string | null;
  badBytes?: string | null;
  targetExit?: number | string;
  elapsedMs?: number;
}

export interface ProtoRow {
  range: string;
  /** Inclusive byte bounds; Infinity for inf. */
  from: number;
  to: number;
  description: string;
  config: string;
}

export interface ProtoTable {
  pid: number | null;
  /** self, intra-node or inter-node: which peer the endpoint reaches. */
  endpoint: string;
  cfg: string;
  /** e.g. "remote memory write by ucp_put*(multi) from host memory to host". */
  operation: string;
  rows: ProtoRow[];
}

/** The family of transport that carried the data. */
export type LaneKind = 'cuda_ipc' | 'cma' | 'shm' | 'ib' | 'tcp' | 'cuda_copy' | 'other';

export interface DataLane {
  /** The Config cell as UCX printed it: "cma/memory", "52% on tcp/lo and 48% on tcp/eth0". */
  config: string;
  /** transport/device pairs named in it. */
  lanes: string[];
  transports: string[];
  kind: LaneKind;
  /** Some of the data goes over tcp (all of it when kind is tcp). */
  tcp: boolean;
  endpoint: string;
  operation: string;
  description: string;
}

/** UCX's and NIXL's own complaint lines, prefixes stripped, each once. */
export interface ProbeComplaints {
  ucxErrors: string[];
  ucxWarnings: string[];
  nixlErrors: string[];
}

// `[%lu.%06lu] [%s:%-5d:%s]` (src/ucs/debug/log.c UCS_LOG_PROC_DATA_FMT): a pid under 10000 is padded, `[vm:4381 :0]`.
const UCX_PREFIX = /^\[\d+\.\d+\]\s+\[[^:\]]*:(\d+)\s*:[^\]]*\]\s+/;
// glog's prefix on NIXL's C++ lines: "E1207 07:49:29.386457   25359 ucx_utils.cpp:543] text".
const GLOG = /^([EWF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+(\S+:\d+)\]\s?(.*)$/;

function bytesOf(s: string): number {
  if (s === 'inf') return Infinity;
  const m = /^(\d+)([KMGTP]?)B?$/i.exec(s.trim());
  if (!m) return NaN;
  const exp = ' KMGTP'.indexOf((m[2] || ' ').toUpperCase());
  return Number(m[1]) * 1024 ** exp;
}

/** "0..inf" -> [0, Infinity]; "8185..64K" -> [8185, 65536]; "0" -> [0, 0]. */
export function parseRange(range: string): { from: number; to: number } {
  const [a, b] = range.split('..');
  const from = bytesOf(a);
  return { from, to: b === undefined ? from : bytesOf(b) };
}

/** The protocol tables UCX_PROTO_INFO=y printed, per process. */
export function parseProtoTables(text: string): ProtoTable[] {
  const open = new Map<string, ProtoTable & { header: boolean }>();
  const out: (ProtoTable & { header: boolean })[] = [];
  for (const raw of text.split('\n')) {
    const pre = UCX_PREFIX.exec(raw);
    if (!pre) continue;
    const pid = Number(pre[1]);
    const body = raw.slice(pre[0].length).trim();
    const key = String(pid);
    if (/^\+[-+]+\+$/.test(body)) continue;
    const cell = /^\|(.*)\|$/.exec(body);
    if (!cell) continue;
    const inner = cell[1];
    const cols = inner.split('|').map((c) => c.trim());
    const cfg = cols.length === 1 ? /^(?:(\S+)\s+)?(self|intra-node|inter-node)\s+(cfg#\d+)$/.exec(cols[0]) : null;
    if (cfg) {
      const t = { pid, endpoint: cfg[2], cfg: cfg[3], operation: '', rows: [], header: false };
      open.set(key, t);
      out.push(t);
      continue;
    }
    const cur = open.get(key);
    if (!cur) continue;
    if (cols.length === 1 && cur.operation === '') {
      cur.operation = cols[0];
    } else if (cols.length === 3 && cols[0] === 'Range') {
      cur.header = true;
    } else if (cols.length === 3 && cur.header) {
      const { from, to } = parseRange(cols[0]);
      cur.rows.push({ range: cols[0], from, to, description: cols[1], config: cols[2] });
    }
  }
  return out.map(({ header: _h, ...t }) => t);
}

function kindOf(transport: string): LaneKind {
  if (transport === 'cuda_ipc') return 'cuda_ipc';
  if (transport === 'cuda_copy' || transport === 'gdr_copy') return 'cuda_copy';
  if (transport === 'cma' || transport === 'knem' || transport === 'xpmem') return 'cma';
  if (transport === 'posix' || transport === 'sysv') return 'shm';
  if (/^(rc|dc|ud)(_|$)/.test(transport)) return 'ib';
  if (transport === 'tcp') return 'tcp';
  return 'other';
}

/** "52% on tcp/lo and 48% on tcp/eth0" -> ["tcp/lo", "tcp/eth0"]. */
export function lanesOf(config: string): string[] {
  return [...config.matchAll(/\b([a-z][\w]*)\/([\w.:-]+)/g)].map((m) => `${m[1]}/${m[2]}`);
}

/**
 * The lane that carried the probe's writes: the row covering `bytes` of a remote-write table of
 * an endpoint to the other process (never `self`: the cfg#0 tables are each agent's loopback and
 * say nothing about the peer). The initiator's table is preferred; the first peer table else.
 */
export function dataLane(tables: ProtoTable[], bytes: number, pid: number | null = null): DataLane | null {
  const peer = tables.filter((t) => t.endpoint !== 'self' && t.operation.startsWith('remote memory write by ucp_put'));
  const ordered = [...peer.filter((t) => pid !== null && t.pid === pid), ...peer.filter((t) => pid === null || t.pid !== pid)];
  for (const t of ordered) {
    const row = t.rows.find((r) => r.from <= bytes && bytes <= r.to);
    if (!row) continue;
    const lanes = lanesOf(row.config);
    const transports = [...new Set(lanes.map((l) => l.split('/')[0]))];
    const kinds = transports.map(kindOf);
    const nonTcp = kinds.filter((k) => k !== 'tcp');
    return {
      config: row.config,
      lanes,
      transports,
      kind: nonTcp.length === 0 ? (kinds.length ? 'tcp' : 'other') : nonTcp[0],
      tcp: kinds.includes('tcp'),
      endpoint: t.endpoint,
      operation: t.operation,
      description: row.description,
    };
  }
  return null;
}

/** UCX ERROR/WARN lines and NIXL's glog E/W lines, without time and pid, each once. */
export function complaints(text: string): ProbeComplaints {
  const ucxErrors = new Set<string>();
  const ucxWarnings = new Set<string>();
  const nixlErrors = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    const pre = UCX_PREFIX.exec(line);
    if (pre) {
      // "select.c:721  UCX  ERROR   no active messages transport ..." (ucs/debug/log.c pads the level)
      const m = /\bUCX\s+(ERROR|WARN)\s+(.*)$/.exec(line.slice(pre[0].length));
      if (m) (m[1] === 'ERROR' ? ucxErrors : ucxWarnings).add(m[2].trim());
      continue;
    }
    const g = GLOG.exec(line);
    if (g) nixlErrors.add(g[3].trim());
  }
  return { ucxErrors: [...ucxErrors], ucxWarnings: [...ucxWarnings], nixlErrors: [...nixlErrors] };
}

/** The probe's JSON line; null when it never got that far (killed, crashed before printing). */
export function probeReport(text: string): NixlProbeReport | null {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const at = lines[i].indexOf(NIXL_PROBE_MARKER);
    if (at < 0) continue;
    try {
      const v = JSON.parse(lines[i].slice(at + NIXL_PROBE_MARKER.length)) as unknown;
      return v && typeof v === 'object' ? (v as NixlProbeReport) : null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * UCX's own "Version 1.22.0 (loaded from /.../libucp-72ad654d.so.0.0.0, git branch ...)" line at
 * UCX_LOG_LEVEL=info (src/ucp/core/ucp_context.c ucp_version_check): which UCX the agents loaded.
 */
export function ucxVersionLine(text: string): { version: string; path: string | null } | null {
  const m = /\bUCX\s+INFO\s+Version (\d[\w.-]*)(?: \(loaded from ([^,)]+))?/.exec(text);
  return m ? { version: m[1], path: m[2] ?? null } : null;
}
