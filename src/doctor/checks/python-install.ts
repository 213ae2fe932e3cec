import type { PythonFacts } from '../../host/types.js';
import { listWords } from '../../list-words.js';

// A broken Dynamo install, told from a missing one (issue 24): pip's metadata says ai-dynamo (or
// ai-dynamo-runtime) is installed, yet the modules the recipe runs do not import. Typical causes: a
// wheel whose files were removed or overwritten (metadata without its module), ai-dynamo without
// ai-dynamo-runtime (`pip install --no-deps ai-dynamo`: dynamo.frontend then fails on dynamo._core,
// the runtime's compiled module), or one of ai-dynamo's own requirements missing. The fix names
// the exact command for the interpreter found, at the installed version. Pure.

export interface BrokenInstall {
  summary: string;
  fix: string;
  /** What kind: the wheel's own files, or a requirement of it. */
  kind: 'dynamo-files' | 'requirement';
  /** The module a requirement would provide (`msgspec`), when that is what is missing. */
  requirement: string | null;
}

const isDynamo = (name: string): boolean => name === 'dynamo' || name.startsWith('dynamo.');

/** "No module named 'x.y'" -> "x.y"; null for any other error. */
export function missingModuleOf(error: string | null): string | null {
  const m = /ModuleNotFoundError: No module named '([^']+)'/.exec(error ?? '');
  return m ? m[1] : null;
}

/**
 * For the required modules that do not import: a broken install when pip's metadata has ai-dynamo
 * or ai-dynamo-runtime (null otherwise: not installed, the caller says how to install it).
 */
export function brokenInstall(py: PythonFacts, missing: readonly string[]): BrokenInstall | null {
  const dynamoMissing = missing.filter(isDynamo);
  const dyn = py.dists?.['ai-dynamo'] ?? null;
  const rt = py.dists?.['ai-dynamo-runtime'] ?? null;
  if (dynamoMissing.length === 0 || (dyn === null && rt === null)) return null;
  const python = py.executable ?? py.interpreter;
  const version = dyn ?? rt!;
  const installed = [dyn !== null ? `ai-dynamo ${dyn}` : null, rt !== null ? `ai-dynamo-runtime ${rt}` : null].filter((x) => x !== null).join(' and ');
  const first = py.modules[dynamoMissing[0]]?.error ?? 'import failed';
  const which = `${listWords(dynamoMissing)} ${dynamoMissing.length === 1 ? 'does' : 'do'} not import`;
  const absent = dyn === null ? 'ai-dynamo is not installed' : rt === null ? 'ai-dynamo-runtime (dynamo._core) is not installed' : null;
  // A module outside dynamo is a requirement of ai-dynamo, not one of its files.
  const req = dynamoMissing.map((m) => missingModuleOf(py.modules[m]?.error ?? null)).find((n) => n !== null && !isDynamo(n)) ?? null;
  if (req !== null && absent === null) {
    return {
      kind: 'requirement',
      requirement: req,
      summary: `${installed} ${installed.includes(' and ') ? 'are' : 'is'} installed for ${python}, but ${which}: a requirement of ai-dynamo is missing (${first})`,
      fix: `\`${python} -m pip install "ai-dynamo==${version}"\` installs its missing requirements (\`${python} -m pip check\` lists them); where its aisimulate placeholder cannot be fetched, \`dynamo-dev setup --release ${version}\` builds a working environment`,
    };
  }
  return {
    kind: 'dynamo-files',
    requirement: null,
    summary: `${installed} ${installed.includes(' and ') ? 'are' : 'is'} installed for ${python}, but ${which} (${first}): a broken install${absent ? `; ${absent}` : ''}`,
    fix: `reinstall both wheels at that version, without touching the rest: \`${python} -m pip install --force-reinstall --no-deps ai-dynamo==${version} ai-dynamo-runtime==${version}\``,
  };
}
