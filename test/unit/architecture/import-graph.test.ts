import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The rules of ARCHITECTURE.md ("Layers" and "Boundaries") read off the import graph of src/, so a
// change that breaks one fails here with the import that breaks it. Every import counts: static,
// `import type`, `export ... from` and `import('...')`.

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');

/** Low to high: a module may import from its own layer and the layers below, never above. */
const LAYERS: readonly (readonly string[])[] = [
  ['errors.ts', 'format-duration.ts', 'list-words.ts', 'json-schema-doc.ts', 'defaults.ts'],
  ['recipe', 'plan', 'diagnose'],
  ['host'],
  ['bench', 'export'],
  ['run'],
  ['doctor', 'probe'],
  ['ui'],
  ['commands'],
  ['cli.ts', 'cli', 'help-text.ts'],
];

/**
 * The imports that climb from a lower layer to a higher one, each with its reason; at most 5. A new
 * one needs a reason here (and in ARCHITECTURE.md); one no longer made must be taken off.
 */
const UPWARD: Readonly<Record<string, string>> = {
  // bench's gates judge a live run with doctor's own checks; doctor/judge.ts is run/'s one door to doctor.
  'run/bench-facts.ts -> doctor/judge.ts': 'bench gates use doctor checks',
  // up's events carry the preflight's check outcomes (a type).
  'run/events.ts -> doctor/types.ts': 'preflight outcomes in up events',
  // up's preflight runs doctor's preflight checks over the plan (createFacts, runChecks), and startRun
  // judges the ports beside live runs as doctor does, both through the one door.
  'run/preflight.ts -> doctor/judge.ts': 'up preflight runs doctor checks',
  'run/start-run.ts -> doctor/judge.ts': 'ports beside live runs, preflight outcome type',
  // requireModel runs model.available alone, early (up --dry-run, bench before its first variant): judge.ts would load every check.
  'run/preflight.ts -> doctor/checks/model.available.ts': 'the model check alone, early and light',
};
const MAX_UPWARD = 5;

/** Only these folders touch the machine (DESIGN.md): everything else is pure or renders. */
const IO_MODULES = new Set(['node:fs', 'node:fs/promises', 'fs', 'fs/promises', 'node:net', 'net', 'node:child_process', 'child_process', 'execa', 'ps-list', 'systeminformation']);
const IO_FOLDERS = ['host', 'run'];

/** Files over this many lines: split by concern (ARCHITECTURE.md). The list only shrinks. */
const MAX_LINES = 400;
const LONG_FILES: ReadonlySet<string> = new Set([
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Module {
  /** Relative to src/, e.g. host/gpu/nvidia-smi.ts. */
  id: string;
  local: string[];
  packages: string[];
}

function readGraph(): Map<string, Module> {
  const graph = new Map<string, Module>();
  for (const path of sourceFiles(SRC)) {
    const text = readFileSync(path, 'utf8');
    const { importedFiles } = ts.preProcessFile(text, true, true);
    const local: string[] = [];
    const packages: string[] = [];
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) {
        packages.push(fileName);
        continue;
      }
      const target = resolve(dirname(path), fileName).replace(/\.js$/, '');
      const found = ['.ts', '.tsx'].map((ext) => target + ext).find((p) => {
        try {
          return statSync(p).isFile();
        } catch {
          return false;
        }
      });
      if (found) local.push(relative(SRC, found));
    }
    graph.set(relative(SRC, path), { id: relative(SRC, path), local: [...new Set(local)], packages });
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan), each one circle or more. */
function cycles(graph: Map<string, Module>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.local ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.local.includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const top = (id: string) => id.split('/')[0];
const layerOf = (id: string) => LAYERS.findIndex((l) => l.includes(top(id)));

const graph = readGraph();

describe('the import graph of src/ (ARCHITECTURE.md)', () => {
  it('reads the whole tree', () => {
    // A parser that found nothing would pass every rule below.
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('cli.ts')?.local.length).toBeGreaterThan(0);
  });

  it('places every folder of src/ in a layer', () => {
    const unplaced = [...new Set([...graph.keys()].map(top))].filter((t) => layerOf(t) < 0);
    expect(unplaced, 'a new folder or top-level file: add it to LAYERS here and to ARCHITECTURE.md').toEqual([]);
  });

  it('has no import cycles (type imports included)', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('host/ imports nothing of run/, doctor/ or commands/: facts flow up, verdicts never down', () => {
    const wrong = [...graph.values()].filter((m) => top(m.id) === 'host')
      .flatMap((m) => m.local.filter((t) => ['run', 'doctor', 'commands'].includes(top(t))).map((t) => `${m.id} -> ${t}`));
    expect(wrong).toEqual([]);
  });

  it('climbs up the layers only where UPWARD says why, at most 5 times', () => {
    const upward = [...graph.values()].flatMap((m) => m.local.filter((t) => layerOf(t) > layerOf(m.id)).map((t) => `${m.id} -> ${t}`)).sort();
    expect(upward).toEqual(Object.keys(UPWARD).sort());
    expect(upward.length).toBeLessThanOrEqual(MAX_UPWARD);
  });

  it('only host/ and run/ import the modules that touch the machine', () => {
    const wrong = [...graph.values()].filter((m) => !IO_FOLDERS.includes(top(m.id)))
      .flatMap((m) => m.packages.filter((p) => IO_MODULES.has(p)).map((p) => `${m.id} imports ${p}`));
    expect(wrong).toEqual([]);
  });

  it(`keeps files under ${MAX_LINES} lines`, () => {
    const long = [...graph.keys()].filter((id) => readFileSync(join(SRC, id), 'utf8').split('\n').length > MAX_LINES + 1);
    expect(long.filter((id) => !LONG_FILES.has(id)), 'split it by concern').toEqual([]);
    // The allowance shrinks as files are split: one under the limit now is taken off the list.
    expect([...LONG_FILES].filter((id) => graph.has(id) && !long.includes(id))).toEqual([]);
  });

  it('keeps the Supervisor under 300 lines: it holds the run (order, policy, state, IPC), each process is run/process-lifecycle.ts', () => {
    // Issue 30: every run feature landed in one 963-line class; 307 lines crept back in one round.
    expect(readFileSync(join(SRC, 'run', 'supervisor.ts'), 'utf8').split('\n').length).toBeLessThan(300);
  });
});

describe('ARCHITECTURE.md matches the tree', () => {
  const doc = readFileSync(join(SRC, '..', 'ARCHITECTURE.md'), 'utf8');

  it('names every folder of src/ and every layer of the test', () => {
    const folders = [...new Set([...graph.keys()].filter((id) => id.includes('/')).map((id) => dirname(id)))];
    // host/gpu/ is named `gpu/` in host/'s table; the others by their path.
    const unnamed = folders.filter((f) => !doc.includes(`src/${f}/`) && !(f.startsWith('host/') && doc.includes(`\`${f.slice(5)}/\``)));
    expect(unnamed, 'add the folder to the code map').toEqual([]);
    for (const layer of LAYERS) for (const unit of layer) expect(doc).toContain(unit.endsWith('.ts') ? `\`${unit}\`` : `\`${unit}/\``);
  });

  it('lists the upward imports the test allows', () => {
    for (const edge of Object.keys(UPWARD)) expect(doc).toContain(edge);
  });
});

describe('the rules catch what they are for', () => {
  it('finds a cycle and a self-import', () => {
    const g = new Map<string, Module>([
      ['a.ts', { id: 'a.ts', local: ['b.ts'], packages: [] }],
      ['b.ts', { id: 'b.ts', local: ['c.ts'], packages: [] }],
      ['c.ts', { id: 'c.ts', local: ['a.ts'], packages: [] }],
      ['d.ts', { id: 'd.ts', local: ['d.ts'], packages: [] }],
      ['e.ts', { id: 'e.ts', local: ['a.ts'], packages: [] }],
    ]);
    expect(cycles(g)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });

  it('reads every kind of import', () => {
    const { importedFiles } = ts.preProcessFile(
      "import type { A } from './a.js';\nexport { B } from './b.js';\nconst c = await import('./c.js');\nimport {\n  d,\n  type E,\n} from 'node:fs';\n",
      true, true,
    );
    expect(importedFiles.map((f) => f.fileName)).toEqual(['./a.js', './b.js', './c.js', 'node:fs']);
  });
});
