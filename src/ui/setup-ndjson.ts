import { EXIT } from '../errors.js';
import type { InstallEvent } from '../host/python/installer.js';
import type { SetupEvent } from '../run/setup-events.js';

// `setup --json`: each event as CLI.md's NDJSON lines (machine, python, choice, tools, step,
// progress, step-done, fallback, plan, aiperf-step, aiperf, and last the result), none, one or two
// per event; the command adds `ts`. What only the terminal says (`ready` before AIPerf, AIPerf's
// install starting or busy) is no line here: the result says it.

/** The NDJSON documents of one event, in order. */
export function setupNdjson(e: SetupEvent): Record<string, unknown>[] {
  switch (e.event) {
    case 'machine': case 'python': case 'aiperf': case 'aiperf-step':
      return [e];
    case 'no-fit':
      return [{ event: 'result', ok: false, code: EXIT.usage, reasons: e.reasons, wouldFit: e.wouldFit, durationMs: e.durationMs }];
    case 'choice': {
      const { device: _terminalOnly, ...choice } = e;
      return [choice];
    }
    case 'no-python':
      return [{ event: 'result', ok: false, code: EXIT.failed, cause: e.cause, durationMs: e.durationMs }];
    case 'plan':
      return [
        { event: 'plan', dir: e.dir, installer: e.installer, python: e.python, steps: e.steps, fallback: e.fallback },
        { event: 'result', ok: true, code: EXIT.ok, dryRun: true, installed: false, release: e.release, engine: e.engine, dir: e.dir, durationMs: e.durationMs },
      ];
    case 'busy':
      return [{ event: 'result', ok: false, code: EXIT.failed, cause: e.cause, fix: e.fix, lock: e.lock, durationMs: e.durationMs }];
    case 'tools':
      return [{ event: 'tools', python: e.python, installer: e.installer, uv: e.uv }];
    case 'install':
      return [installLine(e.install)];
    case 'failed':
      return [{ event: 'result', ok: false, code: e.code, cause: e.cause, step: e.step, tail: e.tail, log: e.log, dir: e.dir, durationMs: e.durationMs }];
    case 'done': {
      const { marker: m, ...made } = e.made;
      return [{
        event: 'result', ok: true, code: EXIT.ok, alreadyComplete: made.already, release: m.release, engine: m.engine, dir: made.dir, python: made.python,
        installer: m.installer, dependencies: m.dependencies, placeholder: m.placeholder, log: made.log, next: e.next, durationMs: e.durationMs,
      }];
    }
    case 'ready': case 'aiperf-installing': case 'aiperf-busy':
      return [];
  }
}

function installLine(e: InstallEvent): Record<string, unknown> {
  switch (e.event) {
    case 'step': return { event: 'step', id: e.id, label: e.label, argv: e.argv, index: e.index, of: e.of };
    case 'progress': return { event: 'progress', id: e.id, ...e.progress, ms: e.ms };
    case 'step-done': return { event: 'step-done', id: e.id, ms: e.ms, ...e.progress };
    // The terminal's sentence for it is not part of --json: `line` has always been null here.
    case 'fallback': return { event: 'fallback', placeholder: e.placeholder, line: null };
  }
}
