import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// "Commands thin" (ARCHITECTURE.md, issue 30): a command parses its options, calls one service and
// renders; its entry function (the default export commander's action runs, cli.ts `lazy`) stays
// under MAX_LINES, and so do the functions that build the program (cli.ts, cli/). `setup` was 297
// lines before its service moved to run/setup.ts: a command that grows past this wants a service.

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');
const MAX_LINES = 80;

interface Measured {
  /** `commands/setup.ts default (setup)`, `cli.ts buildProgram`. */
  name: string;
  lines: number;
}

const isExported = (node: ts.FunctionDeclaration) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
const isDefault = (node: ts.FunctionDeclaration) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword) ?? false;

/** The exported top-level functions of a file, default export first-class: lines from `function` to its closing brace. */
function exportedFunctions(id: string, text: string): (Measured & { isDefault: boolean })[] {
  const sf = ts.createSourceFile(id, text, ts.ScriptTarget.Latest, true, id.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  return sf.statements.filter(ts.isFunctionDeclaration).filter(isExported).map((f) => {
    const first = sf.getLineAndCharacterOfPosition(f.getStart(sf)).line;
    const last = sf.getLineAndCharacterOfPosition(f.getEnd()).line;
    const named = f.name?.text ?? 'anonymous';
    return { name: isDefault(f) ? `${id} default (${named})` : `${id} ${named}`, lines: last - first + 1, isDefault: isDefault(f) };
  });
}

const read = (id: string) => readFileSync(join(SRC, id), 'utf8');
const cliFiles = ['cli.ts', ...readdirSync(join(SRC, 'cli')).filter((n) => n.endsWith('.ts')).map((n) => `cli/${n}`)];

/** The command modules commander runs: every lazy `import('../commands/X.js')` of cli.ts and cli/ (a type import is no command). */
function commandModules(): string[] {
  const ids = cliFiles.flatMap((id) => [...read(id).matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)]
    .map((m) => relative(SRC, resolve(dirname(join(SRC, id)), m[1])).replace(/\.js$/, '.ts'))
    .filter((p) => p.startsWith('commands/')));
  return [...new Set(ids)].sort();
}

describe(`command entry functions stay under ${MAX_LINES} lines (ARCHITECTURE.md "Commands thin")`, () => {
  const commands = commandModules();
  const entries = commands.map((id) => ({ id, entry: exportedFunctions(id, read(id)).find((f) => f.isDefault) }));
  const builders = cliFiles.flatMap((id) => exportedFunctions(id, read(id)));

  it('finds every command commander runs, each with its entry function', () => {
    // A reader that found nothing would pass the limit below.
    expect(commands.length).toBeGreaterThan(15);
    expect(commands).toContain('commands/setup.ts');
    expect(entries.filter((e) => !e.entry).map((e) => e.id), 'a command module whose default export is not a function declaration').toEqual([]);
    expect(builders.map((b) => b.name)).toContain('cli.ts buildProgram');
  });

  it(`no command entry function, nor buildProgram and the cli/ declarations, over ${MAX_LINES} lines`, () => {
    const long = [...entries.map((e) => e.entry!), ...builders].filter((f) => f.lines > MAX_LINES).map((f) => `${f.name}: ${f.lines} lines`);
    expect(long, 'move the work into a service (run/, as run/setup.ts and run/bench-*.ts) and keep the command to options, one call, rendering').toEqual([]);
  });
});

describe('the length rule catches what it is for', () => {
  it('measures a default export and a named one from `function` to the closing brace, comments above left out', () => {
    const body = Array.from({ length: MAX_LINES - 1 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    const text = `/** doc */\nexport default async function long(): Promise<number> {\n${body}\n  return 0;\n}\n\nexport function short(): void {\n}\nfunction notExported(): void {}\n`;
    expect(exportedFunctions('commands/x.ts', text).map(({ name, lines }) => ({ name, lines }))).toEqual([
      { name: 'commands/x.ts default (long)', lines: MAX_LINES + 2 },
      { name: 'commands/x.ts short', lines: 2 },
    ]);
  });
});
