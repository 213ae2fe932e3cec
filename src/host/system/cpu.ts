import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { HostCpu } from '../../plan/cpu.js';
import { parseAllowedCpus, parseCpuFlags, parseMeminfo } from './parse-cpu.js';

// The host's RAM, cores and CPU flags for the CPU device (plan/cpu.ts, doctor's cpu.* checks). Small
// kernel files, read whole; node:os answers when /proc is not there.

export interface HostCpuFacts extends HostCpu {
  availableMiB: number;
  arch: string;
  flags: Set<string>;
}

const read = (path: string) => readFile(path, 'utf8').catch(() => '');

export async function probeHostCpu(): Promise<HostCpuFacts> {
  const [meminfo, status, cpuinfo] = await Promise.all([read('/proc/meminfo'), read('/proc/self/status'), read('/proc/cpuinfo')]);
  const mem = parseMeminfo(meminfo);
  const cpus = parseAllowedCpus(status) ?? os.cpus().map((_, i) => i);
  return {
    memTotalMiB: mem?.totalMiB ?? Math.floor(os.totalmem() / 1024 ** 2),
    availableMiB: mem?.availableMiB ?? Math.floor(os.freemem() / 1024 ** 2),
    cpus,
    arch: os.arch(),
    flags: parseCpuFlags(cpuinfo),
  };
}
