import { signatureFor } from '../../diagnose/signatures.js';
import { fillFix } from '../../diagnose/fill-fix.js';
import { describeEnd } from '../../run/losses.js';
import { raiseFractionSet, workerEntryOf } from '../../plan/fix-hints.js';
import { formatClock } from '../../format-duration.js';
import type { FileFinding } from '../../diagnose/types.js';
import { type Check, type CheckResult, fail, pass, skip, warn } from '../types.js';
import { fileFindings, noLogsResult, planFor, where, workerFiles } from '../log-view.js';

// kv.allocated: every worker logged `GPU KV cache size: N tokens`, and N >= the max model length.
// A worker that never gets there (waiting for a download lock, Error 804, not enough free memory)
// is the one a script would silently measure without.

const fmt = (n: number) => n.toLocaleString('en-US');
// Process states in which a missing KV line is still expected (run.json, src/run/types.ts).
const STILL_STARTING = new Set(['waiting', 'starting', 'loading']);

/** The finding that explains a missing KV line: the first error, else the first warning. */
function reason(findings: FileFinding[]): FileFinding | undefined {
  return findings.find((f) => f.severity === 'error') ?? findings.find((f) => f.severity === 'warn');
}

const check: Check = {
  id: 'kv.allocated',
  title: 'KV cache allocated per worker',
  async run(facts): Promise<CheckResult> {
    const logs = await facts.logs();
    if (!logs) return noLogsResult(await facts.noLogs(), false);
    const run = await facts.run();
    const plan = planFor(logs, run, facts.plan);
    if (logs.source === 'run' && plan.engine === 'mocker') return skip('mocker workers do not log a KV cache size');
    const workers = workerFiles(logs);
    if (workers.length === 0) return skip(`no worker logs in ${logs.label}`);
    const maxLen = plan.maxModelLen;
    const recipe = (logs.source === 'run' ? run?.record.recipeSpec : undefined) ?? facts.recipe;
    const states = new Map((logs.source === 'run' && run ? run.record.processes : []).map((p) => [p.name, p.state]));
    const live = logs.source === 'run' && run?.live === true;

    // A worker a live run lost allocates nothing any more, whatever its log said before it died.
    const lost = new Map((live ? run!.lost : []).map((x) => [x.name, x]));

    const tokens: Record<string, number | null> = {};
    const problems: { status: 'fail' | 'warn'; line: string; fix: string }[] = [];
    for (const w of workers) {
      const t = logs.scan.kvTokens[w.path];
      tokens[w.name] = t ?? null;
      const gone = lost.get(w.name);
      if (gone) {
        const at = gone.at ? ` (${gone.noticed ? 'noticed at' : 'at'} ${formatClock(gone.at)})` : '';
        const had = typeof t === 'number' ? `; it had logged ${fmt(t)} KV tokens` : '';
        const left = gone.leftPids.length > 0 ? `; its engine (pid ${gone.leftPids.join(', ')}) still runs` : '';
        problems.push({
          status: 'fail',
          line: `${w.name} ${describeEnd(gone)}${at}${had}${left}: the run serves without it`,
          // `restart` brings the one worker back in seconds; the teardown ends the whole run (issue 31).
          fix: `the run is degraded (\`dynamo-dev status\` says why): start ${w.name} again alone with \`dynamo-dev restart ${w.name} --run ${run!.record.id}\`, or end the run with \`dynamo-dev teardown --run ${run!.record.id}\` and start it again`,
        });
        tokens[w.name] = null;
        continue;
      }
      if (t === undefined) {
        const unread = logs.scan.partial?.find((p) => p.file === w.path);
        problems.push(unread
          ? { status: 'fail', line: `${w.name}: its log ${w.path} is ${unread.reason}`, fix: `put its log back as a file, or read the worker another way: dynamo-dev status` }
          : { status: 'fail', line: `${w.name}: no log at ${w.path} (the process never started?)`, fix: `dynamo-dev status; dynamo-dev logs ${w.name}` });
        continue;
      }
      if (t === null) {
        const why = reason(fileFindings(logs, w.path));
        const state = states.get(w.name);
        if (!why && live && state !== undefined && STILL_STARTING.has(state)) {
          problems.push({ status: 'warn', line: `${w.name}: no KV cache size logged yet (state ${state})`, fix: `wait for it, or follow it with \`dynamo-dev logs ${w.name} --follow\`` });
          continue;
        }
        const because = why
          ? `: ${why.code} at ${where(logs, w.path, why.line)}: ${why.text}`
          : ' (no known failure signature in its log)';
        problems.push({
          status: 'fail',
          line: `${w.name} never logged its KV cache size${because}`,
          // `dynamo-dev logs` takes a process of a run; a --logs file is read as a file.
          fix: why ? fillFix(signatureFor(why.code)?.fix ?? `dynamo-dev diagnose ${w.path}`, { process: w.name, run: logs.source === 'run' ? run?.record.id : null }) : logs.source === 'run' ? `read its log: dynamo-dev logs ${w.name}` : `read its log: tail -n 50 ${w.path}`,
        });
        continue;
      }
      if (t < maxLen) {
        // Settings of the recipe the worker runs: the run's own, else the one doctor judges.
        const entry = workerEntryOf(recipe, w.name);
        const raise = entry === null ? null : raiseFractionSet(recipe, entry);
        const shorter = `lower maxModelLen (--set maxModelLen=${Math.max(256, Math.floor(t / 256) * 256)})`;
        problems.push({
          status: 'fail',
          line: `${w.name}: ${fmt(t)} KV tokens < max model length ${fmt(maxLen)}: one full-length request does not fit`,
          fix: `${raise ? `raise its gpuMemoryUtilization (${raise}) or ` : ''}${shorter}; estimate with \`dynamo-dev kv ${plan.model} --gpu-mib TOTAL --fraction F\``,
        });
      }
    }
    const evidence = { source: logs.label, maxModelLen: maxLen, kvTokens: tokens, lost: [...lost.keys()] };
    const list = Object.entries(tokens).map(([n, t]) => `${n} ${t === null ? 'none' : fmt(t)}`).join(', ');
    if (problems.length === 0) {
      return pass(`${workers.length} worker${workers.length === 1 ? '' : 's'} with KV cache >= ${fmt(maxLen)} tokens: ${list}`, evidence);
    }
    const failed = problems.filter((p) => p.status === 'fail');
    const first = failed[0] ?? problems[0];
    const names = problems.map((p) => p.line.split(/[: (]/)[0]);
    const summary = lost.size > 0 && [...lost.keys()].some((n) => names.includes(n))
      ? `${problems.length} of ${workers.length} worker${workers.length === 1 ? '' : 's'} lost or without enough KV cache: ${names.join(', ')}`
      : `${problems.length} of ${workers.length} worker${workers.length === 1 ? '' : 's'} without enough KV cache: ${names.join(', ')}`;
    const details = [...problems.map((p) => p.line), `KV tokens per worker: ${list}`];
    return failed.length > 0 ? fail(summary, first.fix, details, evidence) : warn(summary, first.fix, details, evidence);
  },
};

export default check;
