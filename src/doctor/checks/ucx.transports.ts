import { evaluateTls, UCX_INFO_NOT_FOUND } from '../../host/ucx/parse-ucx.js';
import { fail, pass, skip, warn, NIXL_PROBE_TIMEOUT_MS, type Check, type CheckResult, type Facts } from '../types.js';
import { usesNixl } from '../../plan/nixl.js';
import type { UcxFacts } from '../../host/types.js';
import type { NixlProbeFacts } from '../../host/ucx/nixl-probe.js';
import { nixlVerdict } from '../nixl-verdict.js';

// NIXL moves KV between disaggregated workers over UCX. UCX_TLS narrowed to transports without
// active messages (cuda_ipc, cuda_copy) makes every UCX endpoint fail: "no active messages
// transport" / "Destination is unreachable", and the engine never starts (FACTS §5).
//
// Where NIXL is importable in the run's interpreter the verdict is the active probe's
// (host/ucx/nixl-probe.ts, judged in ../nixl-verdict.ts): what two agents really did with the
// workers' environment. Otherwise the static reading below, said to be static: UCX_TLS against
// what `ucx_info -d` lists (or the known transport table), which may be another UCX than NIXL's.

const SAFE_TLS = 'cuda_ipc,cuda_copy,sm,self,tcp';

/**
 * The static reading of UCX_TLS and ucx_info, said to be static, why, and which UCX ucx_info is
 * (NIXL's wheel bundles its own UCX and no ucx_info: FACTS §11).
 */
function staticVerdict(ucx: UcxFacts, why: { short: string; long: string }): CheckResult {
  const r = staticReading(ucx);
  const which = ucx.version !== null ? `; ucx_info is UCX ${ucx.version}` : '';
  return {
    ...r,
    summary: `static (${why.short}${which}): ${r.summary}`,
    evidence: { ...r.evidence, reading: 'static', staticBecause: why.long, ucxInfoLibraryPath: ucx.libraryPath ?? null },
  };
}

function staticReading(ucx: UcxFacts): CheckResult {
  const tls = ucx.tls;
  const missingInfo = ucx.transports === null && (ucx.ucxInfoError ?? '').startsWith(UCX_INFO_NOT_FOUND);
  if (tls === null && missingInfo) return skip('ucx_info not found and UCX_TLS unset: nothing to check', { tls, ucxInfoError: ucx.ucxInfoError });

  const ev = evaluateTls(tls, ucx.transports);
  const evidence = {
    tls,
    version: ucx.version,
    ucxInfoError: ucx.ucxInfoError,
    transports: ucx.transports,
    enabled: ev.enabled,
    activeMessageTransports: ev.amTransports,
    source: ev.fromUcxInfo ? 'ucx_info -d' : 'known transport table (no ucx_info)',
  };
  const listing = ucx.transports
    ? [`ucx_info -d: ${ucx.transports.map((t) => `${t.name}/${t.device}${t.activeMessages ? '' : ' (no am)'}`).join(', ')}`]
    : [`ucx_info unavailable (${ucx.ucxInfoError ?? 'unknown'}); judged from the known transport table`];

  if (tls !== null && ev.peerAmTransports.length === 0) {
    const noAm = ev.enabled.filter((n) => !ev.amTransports.includes(n));
    const missing = ev.fromUcxInfo
      ? ev.available.filter((n) => n !== 'self' && !ev.enabled.includes(n) && (ucx.transports ?? []).some((t) => t.name === n && t.activeMessages))
      : ['tcp', 'posix', 'sysv'];
    return fail(
      `UCX_TLS=${tls} leaves no active-message transport between processes${noAm.length ? ` (${noAm.join(', ')}: zero-copy only)` : ''}; NIXL fails with "no active messages transport"`,
      `unset UCX_TLS, or add one, e.g. export UCX_TLS=${SAFE_TLS}`,
      [
        `enabled by UCX_TLS: ${ev.enabled.length ? ev.enabled.join(', ') : '(nothing available)'}`,
        ev.amTransports.includes('self') ? 'self carries active messages only within one process, never to a peer worker' : null,
        missing.length ? `active-message transports it excludes: ${missing.join(', ')}` : null,
        ev.unknownEntries.length ? `not available on this host: ${ev.unknownEntries.join(', ')}` : null,
        ...listing,
      ].filter((l): l is string => l !== null),
      evidence,
    );
  }

  // UCX_TLS unset, yet what ucx_info lists carries no active message to a peer (a UCX build with
  // only self and the CUDA copy transports): the same failure, and no setting to blame.
  if (ev.peerAmTransports.length === 0) {
    return fail(
      `ucx_info -d lists no active-message transport between processes; NIXL fails with "no active messages transport"`,
      'install a UCX build with its tcp and shared-memory transports (posix, sysv), e.g. the UCX bundled with NIXL, and make sure NIXL loads it (LD_LIBRARY_PATH)',
      listing,
      evidence,
    );
  }

  // From here on the plan moves KV over NIXL (the aggregated ones were skipped above), and some
  // transport reaches a peer.
  if (ev.peerTransports.every((n) => n === 'tcp')) {
    return warn(
      `only tcp is available to move KV between prefill and decode${tls ? ` (UCX_TLS=${tls})` : ''}: KV moves at loopback-TCP speed`,
      tls ? `unset UCX_TLS, or export UCX_TLS=${SAFE_TLS}` : 'install UCX with CUDA support (cuda_ipc) and shared memory transports, e.g. the UCX bundled with NIXL',
      [
        'measured on one GPU: ~608 MB/s, ~196 ms per 1,000-token request for a 0.6B model, 5x slower first token',
        ...(ev.enabled.some((n) => n.startsWith('cuda')) ? [] : ['no cuda transport enabled: NIXL reports "UCX CUDA support was not found!" for GPU memory']),
        ...listing,
      ],
      evidence,
    );
  }
  if (tls === null && ucx.transports === null && !missingInfo) {
    return warn(
      `ucx_info failed: ${ucx.ucxInfoError}; UCX may be broken, and disaggregated KV transfer needs it`,
      'check the UCX install (`ucx_info -v`, LD_LIBRARY_PATH) the NIXL package uses',
      listing,
      evidence,
    );
  }

  const summary = tls === null
    ? `UCX_TLS unset: UCX picks from ${ev.fromUcxInfo ? `${ev.available.length} transports` : 'all transports'}, active messages via ${ev.peerAmTransports.slice(0, 4).join(', ')}`
    : `UCX_TLS=${tls} keeps active messages via ${ev.peerAmTransports.join(', ')}`;
  return pass(summary, evidence, listing);
}

const check: Check = {
  id: 'ucx.transports',
  title: 'UCX transports for KV transfer',
  // The probe has its own deadline (two interpreters, agents, a transfer; torch for VRAM).
  minTimeoutMs: NIXL_PROBE_TIMEOUT_MS.vram + 2_000,
  async run(facts) {
    if (!usesNixl(facts.plan)) {
      // Aggregated workers move no KV between processes: UCX_TLS cannot stop them. Still say what
      // it would do to a disaggregated recipe (judged by the known transport table, no probe).
      const tls = facts.env.UCX_TLS?.trim() ? facts.env.UCX_TLS.trim() : null;
      const ev = tls ? evaluateTls(tls, null) : null;
      const note = ev && ev.peerAmTransports.length === 0 ? `; UCX_TLS=${tls} would stop disaggregated recipes (no active-message transport)` : '';
      return skip(`${facts.plan.recipe} moves no KV over NIXL/UCX: UCX is not used${note}`, { tls, usesNixl: false });
    }
    // The baseline (UCX_TLS removed) only where the setting leaves nothing but tcp between
    // processes by the known table: it runs beside the probe, so the warning costs no extra wait.
    const tls = facts.env.UCX_TLS?.trim() ? facts.env.UCX_TLS.trim() : null;
    const tcpOnly = tls !== null && evaluateTls(tls, null).peerTransports.every((n) => n === 'tcp');
    const ucxInfo = facts.ucx();
    const [probe, base] = await Promise.all([facts.nixl(), tcpOnly ? facts.nixlWithoutTls() : Promise.resolve(null)]);
    if (probe.notImportable || (probe.runError && !probe.report && !probe.timedOut)) {
      const why = probe.notImportable
        ? { short: 'NIXL not importable', long: `NIXL is not importable in ${probe.python}: ${probe.notImportable}` }
        : { short: 'NIXL probe did not run', long: `the NIXL probe did not run: ${probe.runError}` };
      return staticVerdict(await ucxInfo, why);
    }
    // ucx_info answers in milliseconds; a hung one is not waited for once the probe has spoken.
    const ucx = await Promise.race([ucxInfo, new Promise<null>((r) => setTimeout(() => r(null), 50))]);
    return nixlVerdict(probe, { tls: probe.ucxEnv.UCX_TLS ?? null, ucx, withoutTls: base });
  },
};

export default check;
