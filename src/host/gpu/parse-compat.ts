// Pure parsing of where a CUDA forward-compat libcuda.so.1 could come from (FACTS §2): an
// LD_LIBRARY_PATH entry such as /usr/local/cuda/compat or /usr/local/cuda-12.9/compat, or an
// ld.so.cache entry (`ldconfig -p`) under such a dir (the cuda-compat-X-Y package adds one via
// /etc/ld.so.conf.d/*compat*).

/** A dir is a forward-compat dir when it has a `compat` segment under a cuda-ish segment. */
export function isCompatDir(path: string): boolean {
  const segs = path.split('/').filter((s) => s.length > 0);
  const i = segs.findIndex((s) => s === 'compat');
  return i > 0 && segs.slice(0, i).some((s) => /cuda/i.test(s));
}

/** LD_LIBRARY_PATH entries (":" separated, empty entries ignored) that are forward-compat dirs. */
export function ldLibraryPathCompatDirs(ldLibraryPath: string | undefined): string[] {
  if (!ldLibraryPath) return [];
  return ldLibraryPath.split(':').map((s) => s.trim()).filter((s) => s.length > 0 && isCompatDir(s.replace(/\/+$/, '')));
}

export interface LdconfigEntry {
  lib: string;
  /** The parenthesised tag: "libc6,x86-64", "libc6,AArch64", "libc6" (32-bit). */
  arch: string;
  path: string;
}

/**
 * `ldconfig -p` lines: `\tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1`.
 * Some glibc versions add `, OS ABI: Linux 3.2.0` inside the parentheses; the header line
 * (`N libs found in cache ...`) is skipped.
 */
export function parseLdconfig(text: string): LdconfigEntry[] {
  const out: LdconfigEntry[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*?)\s*$/.exec(line);
    if (m) out.push({ lib: m[1], arch: m[2], path: m[3] });
  }
  return out;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i > 0 ? path.slice(0, i) : path;
}

/**
 * libcuda.so.1 paths of the native word size. The driver also installs a 32-bit copy
 * (`(libc6)` under /lib/i386-linux-gnu) on multiarch systems: that one is not a second
 * libcuda for 64-bit processes, so it must not count as "two libcuda.so.1".
 */
export function libcudaEntries(entries: LdconfigEntry[]): { all: string[]; compat: string[] } {
  const cuda = entries.filter((e) => e.lib === 'libcuda.so.1');
  const wide = cuda.filter((e) => /64/.test(e.arch));
  const chosen = wide.length > 0 ? wide : cuda;
  const all = [...new Set(chosen.map((e) => e.path))];
  return { all, compat: all.filter((p) => isCompatDir(dirOf(p))) };
}
