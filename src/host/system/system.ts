import os from 'node:os';

export interface SystemFacts {
  os: string;
  kernel: string;
  cpu: string;
  cores: number;
  memGiB: number;
  node: string;
}

/** Fallback from node:os alone: instant, less descriptive (no distro name). */
function fromNodeOs(): SystemFacts {
  return {
    os: `${os.type()} ${os.release()}`,
    kernel: os.release(),
    cpu: os.cpus()[0]?.model?.trim() ?? os.arch(),
    cores: os.cpus().length,
    memGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
  };
}

/**
 * The report header's machine line. systeminformation adds the distro and CPU brand; it is
 * imported lazily (it is heavy) and bounded so the header never delays the checks.
 */
export async function probeSystem(timeoutMs = 1500): Promise<SystemFacts> {
  const fallback = fromNodeOs();
  const full = (async () => {
    const si = await import('systeminformation');
    const [o, c] = await Promise.all([si.osInfo(), si.cpu()]);
    return {
      ...fallback,
      os: [o.distro, o.release].filter(Boolean).join(' ') || fallback.os,
      kernel: o.kernel || fallback.kernel,
      cpu: [c.manufacturer, c.brand].filter(Boolean).join(' ') || fallback.cpu,
      cores: c.cores || fallback.cores,
    };
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<SystemFacts>((r) => {
    timer = setTimeout(() => r(fallback), timeoutMs);
  });
  try {
    return await Promise.race([full.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}
