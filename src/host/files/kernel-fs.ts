import { statfsSync } from 'node:fs';

// The kernel's own file systems (/proc, /sys, cgroups, debugfs): no folder of ours can be made
// there (root "may write" by mode bits, yet mkdir fails) and no log lives there (walking /proc
// follows /proc/N/root into the whole machine, and half of it answers EACCES).

/** statfs(2) f_type of the kernel's own file systems (linux/magic.h). */
const KERNEL_FS: Record<number, string> = { 0x9fa0: 'proc', 0x62656572: 'sysfs', 0x63677270: 'cgroup2', 0x27e0eb: 'cgroup', 0x64626720: 'debugfs' };

/** The kernel file system `path` is on ("proc", "sysfs", ...), or null (an ordinary one, or unknown). */
export function kernelFs(path: string): string | null {
  try {
    return KERNEL_FS[Number(statfsSync(path).type)] ?? null;
  } catch {
    return null;
  }
}
