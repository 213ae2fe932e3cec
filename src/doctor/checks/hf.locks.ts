import { isLocalModelPath } from '../../host/hf/hf-paths.js';
import { EMBEDDED_MODEL_DIR, isEmbeddedModel } from '../../plan/embedded-model.js';
import { fail, pass, skip, warn, type Check } from '../types.js';

// Several workers started on a model that is not cached race on huggingface_hub's download locks:
// one downloads, the others log "Still waiting to acquire lock on ..." (or fail with "Lock
// acquisition failed" in Dynamo's Rust fetcher) and a script that did not gate on every worker
// measures fewer workers than it thinks (FACTS §6).

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
const ago = (mtimeMs: number, now: number) => {
  const s = Math.max(0, Math.round((now - mtimeMs) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
};

const check: Check = {
  id: 'hf.locks',
  title: 'Model cached, no download lock held',
  async run(facts) {
    const model = facts.recipe.model;
    if (isEmbeddedModel(model)) return skip(`model is dynamo-dev's embedded ${model} (${EMBEDDED_MODEL_DIR}): nothing to download`, { model, folder: EMBEDDED_MODEL_DIR });
    if (isLocalModelPath(model)) return skip(`model is a local path (${model}): no hub download locks`, { model });

    const hf = await facts.hfModel();
    const now = Date.now();
    const download = `hf download ${model}`;
    const downloadFix = `${download}   (older huggingface_hub: huggingface-cli download ${model})`;
    const evidence = {
      model, cacheRoot: hf.cacheRoot, modelDir: hf.modelDir, snapshot: hf.snapshot, configPath: hf.configPath,
      locks: hf.locks, incompleteBlobs: hf.incompleteBlobs, locksUnknown: hf.locksUnknown,
    };

    const held = hf.locks.filter((l) => l.holders.length > 0);
    if (held.length > 0) {
      const holders = [...new Map(held.flatMap((l) => l.holders).map((h) => [h.pid, h])).values()];
      // Our own live run downloading (a worker just started) is progress, not a problem; beside a
      // stranger's holder it is named as ours, and only the stranger is offered to wait for or stop.
      // Any live run of ours (several side by side with up --name) downloading is ours.
      const ours = new Set((await facts.liveRuns()).flatMap((v) => v.pids));
      const others = holders.filter((x) => !ours.has(x.pid));
      // /proc/locks shows 0 for a holder in another PID namespace (a container sharing the cache)
      // and -1 for an OFD lock: there is no pid to name, and `kill 0` would hit our own shell's group.
      const visible = others.filter((h) => h.pid > 0);
      const who = (h: { pid: number; cmd: string | null }, width = Infinity) => (h.pid > 0
        ? `pid ${h.pid}${h.cmd ? ` (${truncate(h.cmd, width)})` : width === Infinity ? ' (command unknown)' : ''}${ours.has(h.pid) ? ' (this run)' : ''}`
        : 'a process not visible here (another container or PID namespace)');
      const details = [
        ...held.map((l) => `${l.path} held by ${l.holders.map((h) => who(h)).join(', ')}`),
        ...hf.incompleteBlobs.map((b) => `partial download ${b.path}: ${mib(b.sizeBytes)}, written ${ago(b.mtimeMs, now)}`),
        'a worker started now would wait on this lock ("Still waiting to acquire lock on ...") instead of loading',
      ];
      if (others.length === 0) {
        return warn(
          `${model} is being downloaded by the live run (pid ${holders.map((x) => x.pid).join(', ')})`,
          `wait for the download to finish; next time run \`${download}\` before \`dynamo-dev up\``,
          details.slice(0, -1),
          evidence,
        );
      }
      const h = others[0];
      const fix = visible.length > 0
        ? `wait for pid ${visible.map((x) => x.pid).join(', ')} to finish downloading; if it is stuck, stop it (kill ${visible.map((x) => x.pid).join(' ')}) and run \`${download}\`. Never delete a lock file a process holds`
        : `wait for the download to finish (the holder runs in another container or PID namespace sharing this cache: look there, e.g. \`fuser ${held[0].path}\` on the host); then run \`${download}\`. Never delete a lock file a process holds`;
      return fail(
        `download lock on ${model} is held by ${who(h, 60)}${others.length > 1 ? ` and ${others.length - 1} more` : ''}`,
        fix,
        details,
        evidence,
      );
    }

    const leftoverLocks = hf.locks.map((l) => `lock file ${l.path} exists but no process holds it (left by an earlier download; harmless)`);

    if (hf.locksUnknown && hf.locks.length > 0) {
      return warn(
        `${hf.locks.length} lock file(s) for ${model}, and /proc/locks is unreadable: cannot tell whether a download is in progress`,
        `check with \`fuser ${hf.locks[0].path}\`; if nothing holds it, run \`${download}\``,
        hf.locks.map((l) => l.path),
        evidence,
      );
    }

    if (hf.incompleteBlobs.length > 0) {
      return warn(
        `interrupted download of ${model}: ${hf.incompleteBlobs.length} .incomplete blob(s) and no process downloading`,
        `${downloadFix}   (resumes the partial files before workers start)`,
        [
          ...hf.incompleteBlobs.map((b) => `${b.path}: ${mib(b.sizeBytes)}, last written ${ago(b.mtimeMs, now)}`),
          ...leftoverLocks,
        ],
        evidence,
      );
    }

    if (!hf.modelDir || !hf.configPath) {
      const workers = facts.plan.processes.filter((p) => p.role !== 'frontend').length;
      const where = hf.modelDir ? `${hf.modelDir} has no snapshot with config.json` : `not in the cache at ${hf.cacheRoot}`;
      return warn(
        `${model} is not cached yet (${where})`,
        downloadFix,
        [
          workers > 1 && !facts.plan.processes.some((p) => p.waitFor.length > 0)
            ? `the ${workers} workers of this recipe start together and would all download it and race on the lock: one downloads, the others wait ("Still waiting to acquire lock on ...") or fail ("Lock acquisition failed")`
            : workers > 1
            ? `up would download it with the first worker (the others start after its KV line, so they find it cached), counting the download against that worker's readiness time; a second process downloading it meanwhile makes one wait on the lock ("Still waiting to acquire lock on ...")`
            : 'the worker would download it at start, counting the download against its readiness time',
          'download it once before `dynamo-dev up`',
          ...leftoverLocks,
        ],
        evidence,
      );
    }

    return pass(
      `${model} is cached (snapshot ${hf.snapshot?.slice(0, 12) ?? '?'}), no lock held${hf.locks.length ? `, ${hf.locks.length} unheld lock file(s) left` : ''}`,
      evidence,
      leftoverLocks,
    );
  },
};

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 3)}...`;
}

export default check;
