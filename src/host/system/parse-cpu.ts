import { parseIdList } from '../../plan/cpu.js';

// Pure readers of the kernel's texts the CPU device needs: /proc/meminfo (RAM), the
// Cpus_allowed_list of /proc/self/status (the cores we may use) and the flags of /proc/cpuinfo
// (the instruction sets vLLM's CPU build picks its kernels by).

/** MemTotal and MemAvailable of /proc/meminfo in MiB; null when a field is missing. */
export function parseMeminfo(text: string): { totalMiB: number; availableMiB: number } | null {
  const kib = (name: string): number | null => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const total = kib('MemTotal');
  const available = kib('MemAvailable');
  return total === null || available === null ? null : { totalMiB: Math.floor(total / 1024), availableMiB: Math.floor(available / 1024) };
}

/** The cores of `Cpus_allowed_list:\t0-1` in /proc/self/status; null when absent or unreadable. */
export function parseAllowedCpus(status: string): number[] | null {
  const m = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(status);
  return m ? parseIdList(m[1]) : null;
}

/** The flags of the first processor in /proc/cpuinfo (x86 `flags`, arm64 `Features`). */
export function parseCpuFlags(cpuinfo: string): Set<string> {
  const m = /^(?:flags|Features)\s*:\s*(.*)$/m.exec(cpuinfo);
  return new Set(m ? m[1].trim().split(/\s+/) : []);
}

export type CpuKernels = 'avx512-bf16' | 'avx512' | 'avx2' | 'none';

/**
 * The x86 kernel library vLLM's CPU build loads (vllm/platforms/cpu.py, import_kernels): `_C`
 * with AVX-512 and its BF16 instructions, `_C_AVX512` with AVX-512 alone, `_C_AVX2` otherwise;
 * without AVX2 no library of the wheel runs.
 */
export function cpuKernels(flags: ReadonlySet<string>): CpuKernels {
  if (flags.has('avx512f')) return flags.has('avx512_bf16') ? 'avx512-bf16' : 'avx512';
  return flags.has('avx2') ? 'avx2' : 'none';
}
