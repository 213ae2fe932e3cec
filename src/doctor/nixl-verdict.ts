import type { NixlProbeFacts } from '../host/ucx/nixl-probe.js';
import type { DataLane, LaneKind } from '../host/ucx/parse-nixl-probe.js';
import type { UcxFacts } from '../host/types.js';
import { fail, pass, warn, type CheckResult } from './types.js';

// ucx.transports judged on the active probe (host/ucx/nixl-probe.ts): what two NIXL agents in the
// workers' environment really did. Pure. The reasons and fixes are the real ones (FACTS §11, NIXL
// 1.4.1 with its UCX 1.22.0, checked by test/nixl): shared memory alone cannot carry NIXL's
// messages without peer failure handling (UCX_MM_ERROR_HANDLING=y turns it on; cma has no active
// messages at all), a transport the machine lacks leaves UCX no device, and tcp works everywhere.

const LANE_WORDS: Record<LaneKind, string> = {
  cuda_ipc: 'GPU memory to GPU memory on the device',
  cma: 'kernel-assisted copy between the processes (shared-memory family)',
  shm: 'shared memory between the processes',
  ib: 'RDMA (InfiniBand/RoCE)',
  tcp: 'TCP sockets',
  cuda_copy: 'staged through host memory by cuda_copy',
  other: 'a transport dynamo-dev does not classify',
};

const MB = 1e6;

/** Best and median of the writes of both directions, in ms; null when none ran. */
export function writeTimes(f: Pick<NixlProbeFacts, 'report'>): { best: number; median: number; count: number } | null {
  const all = [...(f.report?.writeMs ?? []), ...(f.report?.targetWriteMs ?? [])].filter((t) => Number.isFinite(t)).sort((a, b) => a - b);
  if (all.length === 0) return null;
  const mid = Math.floor(all.length / 2);
  return { best: all[0], median: all.length % 2 ? all[mid] : (all[mid - 1] + all[mid]) / 2, count: all.length };
}

/** ms per MB (10^6 bytes) of the best write. */
export function msPerMb(f: Pick<NixlProbeFacts, 'report' | 'bytes'>): number | null {
  const t = writeTimes(f);
  return t ? t.best / (f.bytes / MB) : null;
}

const fmtMs = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const mib = (bytes: number) => (bytes % (1 << 20) === 0 ? `${bytes / (1 << 20)} MiB` : `${bytes} bytes`);

/** "UCX_TLS=tcp UCX_MM_ERROR_HANDLING=y", or "no UCX_* set". */
export function ucxEnvWords(env: Record<string, string>): string {
  const pairs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return pairs.length ? pairs.join(' ') : 'no UCX_* set';
}

/** One line on which UCX ucx_info is, and whether it is the one NIXL loads. */
export function ucxInfoVsNixl(ucx: UcxFacts | null, nixlUcx: { version: string | null; path: string | null }): string | null {
  if (!ucx || (ucx.version === null && !ucx.libraryPath)) return null;
  const info = `ucx_info on PATH is UCX ${ucx.version ?? '(version unknown)'}${ucx.libraryPath ? ` (${ucx.libraryPath})` : ''}`;
  if (!nixlUcx.version) return `${info}; NIXL's own UCX is not known`;
  const sameVersion = ucx.version === nixlUcx.version;
  const dir = (p: string) => p.slice(0, p.lastIndexOf('/'));
  const sameDir = !ucx.libraryPath || !nixlUcx.path || dir(ucx.libraryPath) === dir(nixlUcx.path);
  if (sameVersion && sameDir) return `${info}, the UCX NIXL loads`;
  return `${info}, not the UCX ${nixlUcx.version} NIXL loads${nixlUcx.path ? ` (${nixlUcx.path})` : ''}: \`ucx_info -d\` describes another library`;
}

function laneLine(lane: DataLane): string {
  return `lane (UCX_PROTO_INFO, ${lane.endpoint} endpoint): ${lane.operation} | ${lane.description} | ${lane.config}: ${LANE_WORDS[lane.kind]}`;
}

function timesLine(f: NixlProbeFacts): string | null {
  const t = writeTimes(f);
  if (!t) return null;
  return `${t.count} writes of ${mib(f.bytes)} verified byte for byte (${f.report?.writeMs?.length ?? 0} each way): best ${fmtMs(t.best)} ms, median ${fmtMs(t.median)} ms (scheduling on a busy machine moves the median, rarely the best)`;
}

function memLine(f: NixlProbeFacts): string {
  const r = f.report;
  const mem = r?.mem ?? 'DRAM';
  const why = r?.memFallback ? ` (VRAM not used: ${r.memFallback})` : mem === 'DRAM' ? ` (${f.dramWhy ?? 'no GPU here'}: host memory)` : '';
  return `buffers: ${mem}${why}; NIXL ${r?.nixl ?? '?'}, UCX ${r?.ucxVersion ?? '?'}${r?.ucpPath ? ` (${r.ucpPath})` : ''}`;
}

/** What to do about a UCX_TLS that gives NIXL no agent, from UCX's own reason. */
export function agentFix(tls: string | null, reasons: string[]): string {
  const text = reasons.join('\n');
  const missing = /transports? (.+?) (?:is|are) not available, please use one or more of: (.+)$/m.exec(text);
  if (missing && tls) {
    return `unset UCX_TLS, or name only transports this machine has (UCX lists: ${missing[2].trim()}), e.g. export UCX_TLS=${tls.replace(/^\^/, '')
      .split(',').filter((t) => !missing[1].includes(`'${t}'`)).concat('tcp').filter((t, i, a) => a.indexOf(t) === i).join(',')}`;
  }
  const mmNoPeer = /\b(sysv|posix)\/\S+ - no peer failure handler/.test(text);
  if (tls) {
    const plusTcp = tls.startsWith('^') ? null : `${tls},tcp`;
    const mm = mmNoPeer ? 'export UCX_MM_ERROR_HANDLING=y (shared memory then handles peer failure and carries NIXL\'s messages), or ' : '';
    return `${mm}unset UCX_TLS${plusTcp ? `, or add tcp for NIXL's messages: export UCX_TLS=${plusTcp}` : ''}`;
  }
  return mmNoPeer
    ? 'export UCX_MM_ERROR_HANDLING=y, or install a UCX with tcp (the UCX in NIXL\'s wheel has it)'
    : 'check the UCX NIXL loads: reinstall nixl (its wheel bundles UCX), and unset UCX_* settings that narrow it';
}

/** The verdict of the probe: fail (no agent, failed or corrupt transfer), warn (TCP lane, probe cut short), pass (the lane). */
export function nixlVerdict(f: NixlProbeFacts, o: { tls: string | null; ucx: UcxFacts | null; withoutTls: NixlProbeFacts | null }): CheckResult {
  const r = f.report;
  const c = f.complaints;
  const reasons = [...c.ucxErrors, ...c.ucxWarnings.filter((w) => !/UCX_WARN_UNUSED_ENV_VARS/.test(w))];
  const infoLine = ucxInfoVsNixl(o.ucx, { version: r?.ucxVersion ?? null, path: r?.ucpPath ?? null });
  const evidence: Record<string, unknown> = {
    source: 'nixl probe',
    tls: o.tls,
    ucxEnv: f.ucxEnv,
    nixl: r?.nixl ?? null,
    ucxVersion: r?.ucxVersion ?? null,
    ucpPath: r?.ucpPath ?? null,
    mem: r?.mem ?? null,
    stage: r?.stage ?? null,
    error: r?.error ?? f.runError,
    lane: f.lane,
    writeMs: r?.writeMs ?? null,
    targetWriteMs: r?.targetWriteMs ?? null,
    bytes: f.bytes,
    msPerMb: msPerMb(f),
    ucxErrors: c.ucxErrors,
    ucxWarnings: c.ucxWarnings,
    nixlErrors: c.nixlErrors,
    elapsedMs: f.elapsedMs,
    killedLeftovers: f.killedLeftovers,
    ...(o.ucx ? { ucxInfo: { version: o.ucx.version, libraryPath: o.ucx.libraryPath ?? null } } : {}),
  };
  const env = ucxEnvWords(f.ucxEnv);
  const quoted = [...reasons.map((l) => `UCX: ${l}`), ...c.nixlErrors.map((l) => `NIXL: ${l}`)];
  const tail = [infoLine, `probe: ${env}; ${(f.elapsedMs / 1000).toFixed(1)} s in ${f.python}`].filter((l): l is string => l !== null);

  if (f.runError && !r) {
    return warn(
      `the NIXL transfer probe gave no answer: ${f.runError}`,
      f.timedOut ? 'rerun when the machine is less busy, or raise --timeout; skip it with --skip ucx.transports' : `check that ${f.python} runs: \`${f.python} -c "import nixl"\``,
      [...quoted, ...tail],
      evidence,
    );
  }
  const stage = r?.stage ?? 'agent';
  if (stage === 'agent' || stage === 'register' || stage === 'metadata' || r?.peerStage === 'agent') {
    const first = c.ucxErrors[0] ?? r?.peerError ?? r?.error ?? 'no reason given';
    // The peer's failure is the cause when this side only waited for its metadata.
    const at = r?.peerStage && stage === 'metadata' ? r.peerStage : stage;
    const what = at === 'register' ? 'register its buffer' : at === 'metadata' ? 'exchange metadata' : 'create a UCX agent';
    const who = r?.nixl ? `NIXL ${r.nixl}` : 'NIXL';
    const err = (r?.peerError ?? r?.error ?? '').replace(/^.*\./, '');
    const rest = quoted.filter((l) => l !== `UCX: ${first}`);
    return fail(
      `${who} cannot ${what}${o.tls ? ` with UCX_TLS=${o.tls}` : ''}${err ? ` (${err})` : ''}: UCX says "${first}"`,
      agentFix(o.tls, reasons),
      [...rest, ...tail],
      evidence,
    );
  }
  if (stage !== 'done') {
    const bad = r?.badBytes ? `the bytes that arrived differ from those sent (${r.badBytes})` : r?.error ?? r?.peerError ?? 'stopped without a reason';
    return fail(
      `a NIXL transfer between two processes failed${o.tls ? ` (UCX_TLS=${o.tls})` : ''}: ${bad}`,
      o.tls ? 'unset UCX_TLS and run doctor again; if it still fails, check the UCX devices NIXL finds (UCX_LOG_LEVEL=info)' : 'check the UCX devices NIXL finds (UCX_LOG_LEVEL=info) and its version',
      [...quoted, ...(timesLine(f) ? [timesLine(f)!] : []), memLine(f), ...tail],
      evidence,
    );
  }

  const lane = f.lane;
  const per = msPerMb(f);
  const cost = per === null ? '' : `, best ${fmtMs(writeTimes(f)!.best)} ms (${per.toFixed(2)} ms/MB)`;
  const details = [lane ? laneLine(lane) : 'lane: UCX printed no protocol table for the writes (UCX_PROTO_INFO): not known', timesLine(f), memLine(f), ...tail]
    .filter((l): l is string => l !== null);
  if (lane && lane.kind === 'tcp') {
    const base = o.withoutTls && o.withoutTls.lane && !o.withoutTls.lane.tcp ? o.withoutTls : null;
    const basePer = base ? msPerMb(base) : null;
    const against = base && basePer !== null
      ? `; against ${basePer.toFixed(2)} ms/MB over ${base.lane!.config} with UCX_TLS unset`
      : '';
    return warn(
      `KV would move over TCP (${lane.config}${o.tls ? `; UCX_TLS=${o.tls}` : ''}): ${mib(f.bytes)}${cost}${against}`,
      o.tls
        ? (base ? `unset UCX_TLS (UCX then picks ${base.lane!.config})` : 'unset UCX_TLS, or let shared memory in: add sm (cma, sysv, posix) or cuda_ipc')
        : 'this UCX finds no shared-memory lane to the other process: check /dev/shm and ptrace limits (cma), or use the UCX bundled with NIXL',
      [
        ...details,
        ...(base ? [`with UCX_TLS unset the same probe used ${base.lane!.config}: ${timesLine(base) ?? 'no times'}`] : []),
        'a disaggregated result measured over TCP measures the socket copy, not the engine (FACTS: 608 MB/s, ~196 ms per 1,000-token request on a 0.6B model)',
      ],
      evidence,
    );
  }
  return pass(
    `NIXL ${r?.nixl ?? ''} moved ${mib(f.bytes)} each way between two processes over ${lane ? `${lane.config} (${lane.kind})` : 'an unknown lane'}, UCX ${r?.ucxVersion ?? '?'}${cost}`,
    evidence,
    details,
  );
}
