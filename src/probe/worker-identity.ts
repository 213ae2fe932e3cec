import { getJson } from '../host/net/http.js';
import { readListeners, socketOwners } from '../host/net/ports.js';
import { listProcesses } from '../host/procs/processes.js';
import { readHead } from '../host/files/read-head.js';
import { nameWorkers, ownWorkerIdInLog, workerEndpointsOf } from './worker-names.js';
import type { RunRecord } from '../run/types.js';

// Reads what names the run's workers by their Dynamo worker ids (the rules: probe/worker-names.ts):
// the frontend's /health, the listening sockets and which of the run's process groups hold them,
// and the workers' logs.

/** A log's first bytes are enough: each start names its id within its first lines. */
const LOG_READ_LIMIT = 16 * 1024 * 1024;

/** Worker id -> process name of the run (empty when nothing can be told). Never throws. */
export async function workerNamesOfRun(rec: RunRecord, frontendUrl: string, timeoutMs = 5000): Promise<Map<string, string>> {
  try {
    const workers = rec.processes.filter((p) => p.role !== 'frontend');
    const health = await getJson(`${frontendUrl.replace(/\/+$/, '')}/health`, timeoutMs);
    const endpoints = workerEndpointsOf(health.body);

    // The process holding each endpoint's port, when it is in one of the workers' process groups.
    const processOfPort = new Map<number, string>();
    const ports = new Set(endpoints.flatMap((e) => (e.port === null ? [] : [e.port])));
    const groups = new Map(workers.flatMap((p) => (p.pgid ? [[p.pgid, p.name] as const] : [])));
    if (ports.size > 0 && groups.size > 0) {
      const listeners = (await readListeners()).filter((l) => ports.has(l.port));
      const candidates = (await listProcesses()).filter((p) => p.pgid !== null && groups.has(p.pgid));
      const owners = await socketOwners(new Set(listeners.map((l) => l.inode)), candidates);
      const pgidOf = new Map(candidates.map((p) => [p.pid, p.pgid as number]));
      for (const l of listeners) {
        const pid = owners.get(l.inode);
        const name = pid !== undefined ? groups.get(pgidOf.get(pid) ?? -1) : undefined;
        if (name) processOfPort.set(l.port, name);
      }
    }

    const idInLog = new Map<string, string | null>();
    for (const w of workers) {
      const text = w.log ? await readHead(w.log, LOG_READ_LIMIT) : null;
      idInLog.set(w.name, text === null ? null : ownWorkerIdInLog(text));
    }
    return nameWorkers(endpoints, processOfPort, idInLog);
  } catch {
    return new Map();
  }
}
