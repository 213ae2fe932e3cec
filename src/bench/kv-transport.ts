// The KV transfer lane of a disaggregated variant, read from its preflight's ucx.transports result
// (the NIXL probe, src/doctor/nixl-verdict.ts, runs in up's preflight of every plan that uses NIXL).
// Pure. The summaries parsed are nixl-verdict's own; test/unit/bench/kv-transport.test.ts feeds it
// nixlVerdict's output on the real NIXL 1.4.1 recordings, so the two cannot drift apart.

// A type, not an interface: it is stored in bench's result, whose loose zod objects take any key.
export type KvTransport = {
  /** The check's verdict: pass (a shared-memory/GPU/RDMA lane), warn (TCP, or no answer), fail. */
  status: string;
  /** UCX's Config cell for the probe's writes, e.g. "cma/memory", "52% on tcp/lo and 48% on tcp/eth0"; null if not known. */
  lane: string | null;
  /** Some or all of the KV moves over TCP: the variant's numbers measure TCP too. */
  tcp: boolean;
  /** ms per MB of the probe's best 4 MiB write; null if none ran. */
  msPerMb: number | null;
  ucxVersion: string | null;
  /** The check's summary as the preflight said it. */
  summary: string;
};

const PASS = /^NIXL \S* ?moved .* over (.+?) \((\w+)\), UCX (\S+?), best [\d.]+ ms \(([\d.]+) ms\/MB\)$/;
const TCP = /^KV would move over TCP \((.+?)(?:; UCX_TLS=[^)]*)?\): .*?\(([\d.]+) ms\/MB\)/;

/** The transport of a variant's preflight, or null when it ran no ucx.transports check (no NIXL) or only the static one. */
export function kvTransportOf(doctor: readonly { id: string; status: string; summary: string }[]): KvTransport | null {
  const c = doctor.find((d) => d.id === 'ucx.transports');
  if (!c || c.status === 'skip' || c.summary.startsWith('static')) return null;
  const pass = PASS.exec(c.summary);
  if (pass) return { status: c.status, lane: pass[1], tcp: false, msPerMb: Number(pass[4]), ucxVersion: pass[3], summary: c.summary };
  const tcp = TCP.exec(c.summary);
  if (tcp) return { status: c.status, lane: tcp[1], tcp: true, msPerMb: Number(tcp[2]), ucxVersion: null, summary: c.summary };
  return { status: c.status, lane: null, tcp: false, msPerMb: null, ucxVersion: null, summary: c.summary };
}
