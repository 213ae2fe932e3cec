import type { CommandContext } from './context.js';
import { UserError } from '../errors.js';
import { followFile, type Follower } from '../run/follow.js';
import { openLines, readAllLines, tailFile, type LineSource } from '../run/log-read.js';
import { mergeByTime, type MergeSource } from '../run/log-merge.js';
import { pickRun } from '../run/pick-run.js';
import { findRunView } from '../run/state.js';
import { linePrefixer } from '../ui/log-prefix.js';
import { stripAnsi } from '../diagnose/line.js';
import { isSameProcess } from '../run/proc.js';
import { warnIfProcIsForeign } from './proc-warning.js';

export interface LogsOptions {
  run?: string;
  follow?: boolean;
  lines?: number;
  json?: boolean;
}

type Rec = Awaited<ReturnType<typeof pickRun>>;
type Proc = Rec['processes'][number];
type Format = (name: string, line: string) => string;

/** Writes to stdout until its reader goes away; `stopped()` is true from then on (or after Ctrl-C while following). */
interface Out {
  write: (text: string) => Promise<void> | void;
  broken: () => boolean;
  stopped: () => boolean;
}

/** `logs [PROCESS]`: one process plain, or all of them interleaved by time with a name prefix; --lines N from the end; --follow until the run stops or Ctrl-C. */
export default async function logs(ctx: CommandContext, processName: string | undefined, opts: LogsOptions = {}): Promise<number> {
  const rec = await pickRun(ctx.stateDir, opts.run, 'logs to show');
  warnIfProcIsForeign(ctx);
  const names = rec.processes.map((p) => p.name);
  const chosen = processName ? rec.processes.filter((p) => p.name === processName) : rec.processes;
  if (processName && chosen.length === 0) {
    throw new UserError(`unknown process "${processName}" in run ${rec.id}; valid: ${names.join(', ') || '(none recorded)'}`);
  }
  const prefixed = !processName && chosen.length > 1;
  const prefix = linePrefixer(names, { prefixed, json: ctx.json });
  // vLLM colours its prefixes: raw escape codes are noise in a file or a pipe (grep, less without -R).
  const plain = !ctx.json && (!(ctx.stdout as NodeJS.WriteStream).isTTY || !ctx.color);
  const fmt: Format = plain ? (name: string, line: string) => prefix(name, stripAnsi(line)) : prefix;
  const follow = Boolean(opts.follow);
  // Following ends on Ctrl-C (exit 0), also while the first lines are still being printed.
  let interrupted = false;
  let onInterrupt: (() => void) | null = null;
  const interrupt = () => {
    interrupted = true;
    onInterrupt?.();
  };
  if (follow) {
    process.once('SIGINT', interrupt);
    process.once('SIGTERM', interrupt);
  }
  const out = stdoutOf(ctx, () => interrupted);

  const offsets = prefixed
    ? await printMerged(ctx, rec, chosen, out, fmt, opts.lines, follow)
    : await printEach(ctx, chosen, out, fmt, opts.lines, follow);
  if (!follow) return 0;
  const unhook = () => {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  };
  if (out.stopped()) {
    unhook();
    return 0;
  }
  const ended = await followUntilEnd(ctx, rec, chosen, out, fmt, offsets, (done) => {
    onInterrupt = done;
  }, unhook);
  if (ended !== null && !out.broken()) ctx.stderr.write(`dynamo-dev: run ${rec.id} has ${ended === 'stopped' ? 'stopped' : `ended (${ended})`}; nothing more will be logged\n`);
  return 0;
}

/** stdout, written with back-pressure; stopped once its reader went away or `interrupted()`. */
function stdoutOf(ctx: CommandContext, interrupted: () => boolean): Out {
  // The reader went away (`logs | head`, a closed terminal): stop reading at once, quietly. A write
  // waiting for 'drain' must not wait forever for a pipe that will never drain.
  let broken = false;
  const wake = new Set<() => void>();
  const onBroken = () => {
    broken = true;
    for (const w of wake) w();
    wake.clear();
  };
  ctx.stdout.on('error', onBroken);
  ctx.stdout.on('close', onBroken);
  const write = (text: string): Promise<void> | void => {
    if (broken || text === '') return;
    if (!ctx.stdout.write(text)) {
      return new Promise<void>((r) => {
        const done = () => {
          wake.delete(done);
          ctx.stdout.off('drain', done);
          r();
        };
        wake.add(done);
        ctx.stdout.once('drain', done);
      });
    }
  };
  return { write, broken: () => broken, stopped: () => broken || interrupted() };
}

/** Every process: interleaved by the time each line says it was written (log-merge.ts). Returns where each log was read to. */
async function printMerged(ctx: CommandContext, rec: Rec, chosen: readonly Proc[], out: Out, fmt: Format, lines: number | undefined, follow: boolean): Promise<Map<string, number>> {
  const offsets = new Map<string, number>();
  const stop = out.stopped;
  const sources: LineSource[] = [];
  try {
    const merging: MergeSource[] = [];
    for (const p of chosen) {
      const src = await openLines(p.log, { tail: lines, includePartial: !follow, stop });
      if (src === null) {
        if (!follow) ctx.stderr.write(`dynamo-dev: no log yet for ${p.name} (${p.log})\n`);
        continue;
      }
      sources.push(src);
      const started = p.startedAt ? Date.parse(p.startedAt) : NaN;
      merging.push({ name: p.name, batches: src.batches, before: src.before, startMs: Number.isFinite(started) ? started : null });
    }
    const created = Date.parse(rec.createdAt);
    await mergeByTime(merging, (name, ls) => out.write(ls.map((l) => fmt(name, l)).join('')), {
      nearMs: Number.isFinite(created) ? created : Date.now(), stop,
    });
    chosen.forEach((p) => {
      const i = merging.findIndex((m) => m.name === p.name);
      offsets.set(p.name, i < 0 ? 0 : sources[i].end.pos);
    });
  } finally {
    await Promise.all(sources.map((src) => src.close()));
  }
  return offsets;
}

/** One log after another (one process, or --lines of each). Returns where each log was read to. */
async function printEach(ctx: CommandContext, chosen: readonly Proc[], out: Out, fmt: Format, lines: number | undefined, follow: boolean): Promise<Map<string, number>> {
  const offsets = new Map<string, number>();
  const stop = out.stopped;
  for (const p of chosen) {
    if (out.broken()) break;
    const emit = (ls: string[]) => out.write(ls.map((l) => fmt(p.name, l)).join(''));
    const end = lines !== undefined
      ? await tailFile(p.log, lines, !follow, emit, { stop })
      : await readAllLines(p.log, emit, !follow, { stop });
    if (end === null && !follow) ctx.stderr.write(`dynamo-dev: no log yet for ${p.name} (${p.log})\n`);
    offsets.set(p.name, end ?? 0);
  }
  return offsets;
}

/**
 * Follow every chosen log until the run stops, the reader goes away or Ctrl-C (`onInterrupt` is
 * given the function that ends it); lines of different processes interleave as they arrive.
 * Returns the run's status when it ended, else null.
 */
async function followUntilEnd(
  ctx: CommandContext, rec: Rec, chosen: readonly Proc[], out: Out, fmt: Format, offsets: Map<string, number>,
  onInterrupt: (done: () => void) => void, unhook: () => void,
): Promise<string | null> {
  const followers: Follower[] = chosen.map((p) => followFile(p.log, (line) => void out.write(fmt(p.name, line)), { offset: offsets.get(p.name) ?? 0 }));
  let ended: string | null = null;
  await new Promise<void>((resolve) => {
    // Once the run has stopped nothing will be written any more: end, as `tail -f --pid` does.
    // Judging the run reads its record and /proc (slow on a busy machine), so it runs once a second,
    // and at once when a cheap check sees one of its recorded processes (or its supervisor) end.
    let checking = false;
    const judge = () => {
      if (out.broken()) return done();
      if (checking) return;
      checking = true;
      findRunView(ctx.stateDir, rec.id).then((v) => {
        checking = false;
        if (v && !v.live) {
          ended = v.status;
          done();
        }
      }, () => {
        checking = false;
      });
    };
    const keepAlive = setInterval(judge, 1000);
    const recorded = [rec.supervisor, ...rec.processes].filter((p): p is typeof p & { pid: number } => p.pid !== null);
    const aliveKey = () => recorded.map((p) => (isSameProcess(p.pid, p.startTicks) ? '1' : '0')).join('');
    let alive = aliveKey();
    const ends = setInterval(() => {
      const now = aliveKey();
      if (now !== alive) judge();
      alive = now;
    }, 100);
    const done = () => {
      clearInterval(keepAlive);
      clearInterval(ends);
      unhook();
      resolve();
    };
    onInterrupt(done);
  });
  for (const f of followers) f.stop();
  return ended;
}
