import type { ComputeApp, Gpu, GpuFailureReason } from '../types.js';

// Pure parsers for nvidia-smi output (FACTS §1). Fed raw text; tested on the real samples in
// test/fixtures/samples/nvidia-smi. Formats drift between drivers, so every parser is tolerant:
// units, placeholders and extra columns never throw.

/** What a user sees when nvidia-smi is not on PATH. */
export const NOT_INSTALLED_MESSAGE = 'nvidia-smi not found: the NVIDIA driver is not installed (or not on PATH)';

/** The fields probeGpu asks for, in this order. */
export const GPU_QUERY_FIELDS = [
  'index', 'name', 'uuid', 'driver_version', 'memory.total', 'memory.used', 'memory.free', 'compute_cap', 'pci.bus_id',
] as const;
export type GpuQueryField = (typeof GPU_QUERY_FIELDS)[number];

export const COMPUTE_APPS_FIELDS = ['pid', 'process_name', 'used_memory', 'gpu_uuid'] as const;

/** `[N/A]`, `N/A`, `[Not Supported]`, `[Insufficient Permissions]`, `[Unknown Error]`... -> null. */
export function cleanValue(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const v = raw.trim();
  if (v === '' || /^\[.*\]$/.test(v) || /^n\/?a$/i.test(v)) return null;
  return v;
}

/** "8188", "8188 MiB", "8 GiB" -> MiB; placeholders -> null. */
export function parseMiB(raw: string | undefined): number | null {
  const v = cleanValue(raw);
  if (v === null) return null;
  const m = /^(-?\d+(?:\.\d+)?)\s*([KMGT]i?B)?$/i.exec(v);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? 'MiB').toUpperCase().replace('I', 'i');
  const factor: Record<string, number> = { KiB: 1 / 1024, KB: 1 / 1024, MiB: 1, MB: 1, GiB: 1024, GB: 1024, TiB: 1024 * 1024, TB: 1024 * 1024 };
  return Math.round(n * (factor[unit] ?? 1));
}

function parseIntOrNull(raw: string | undefined): number | null {
  const v = cleanValue(raw);
  if (v === null || !/^\d+$/.test(v)) return null;
  return Number(v);
}

function lines(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
}

/**
 * `--query-gpu=<fields> --format=csv,noheader[,nounits]`: one GPU per line, ", " separated.
 * A header line (when `noheader` was forgotten) is skipped. Lines without an integer index are
 * ignored rather than guessed.
 */
export function parseQueryGpu(text: string, fields: readonly string[] = GPU_QUERY_FIELDS): Gpu[] {
  const gpus: Gpu[] = [];
  for (const line of lines(text)) {
    const cols = line.split(/\s*,\s*/);
    const get = (f: string): string | undefined => {
      const i = fields.indexOf(f);
      return i >= 0 ? cols[i] : undefined;
    };
    const index = parseIntOrNull(get('index'));
    if (index === null) continue; // header or garbage
    gpus.push({
      index,
      name: cleanValue(get('name')) ?? `GPU ${index}`,
      uuid: cleanValue(get('uuid')),
      driverVersion: cleanValue(get('driver_version')),
      memoryTotalMiB: parseMiB(get('memory.total')),
      memoryUsedMiB: parseMiB(get('memory.used')),
      memoryFreeMiB: parseMiB(get('memory.free')),
      computeCap: cleanValue(get('compute_cap')),
      pciBusId: cleanValue(get('pci.bus_id')),
    });
  }
  return gpus;
}

/**
 * The driver's highest supported CUDA version, from any of: the plain header
 * (`... CUDA Version: 12.8 |`), `-q` (`CUDA Version   : 13.2`) or `--version`
 * (`CUDA Version        : 13.2`). null when absent or `N/A`.
 */
export function parseCudaVersion(text: string): string | null {
  const m = /CUDA Version\s*:\s*(\d+\.\d+)/i.exec(text);
  return m ? m[1] : null;
}

/** Driver version from the plain header, `-q` (`Driver Version : X`) or `--version` (`DRIVER version : X`). */
export function parseDriverVersion(text: string): string | null {
  const m = /Driver Version\s*:\s*(\d+(?:\.\d+)+)/i.exec(text);
  return m ? m[1] : null;
}

/**
 * `--query-compute-apps=pid,process_name,used_memory[,gpu_uuid] --format=csv,noheader,nounits`.
 * Tolerates the 3-column form (no uuid) and names that contain ", " (older drivers did not
 * replace commas in process names): pid is the first column, the uuid the last when it looks
 * like one, memory the one before, and the name is everything in between.
 */
export function parseComputeApps(text: string): ComputeApp[] {
  const apps: ComputeApp[] = [];
  for (const line of lines(text)) {
    if (/no running processes found/i.test(line)) continue;
    const cols = line.split(', ');
    const pid = parseIntOrNull(cols[0]);
    if (pid === null || cols.length < 2) continue;
    let end = cols.length;
    let gpuUuid: string | null = null;
    if (cols.length >= 4 && /^(GPU|MIG)-/i.test(cols[end - 1].trim())) {
      gpuUuid = cols[end - 1].trim();
      end--;
    }
    let usedMiB: number | null = null;
    if (end >= 3) {
      const last = cols[end - 1];
      const looksLikeMem = cleanValue(last) === null || /^\s*\d+(\.\d+)?\s*([KMGT]i?B)?\s*$/i.test(last);
      if (looksLikeMem) {
        usedMiB = parseMiB(last);
        end--;
      }
    }
    apps.push({ pid, processName: cols.slice(1, end).join(', ').trim(), usedMiB, gpuUuid });
  }
  return apps;
}

/**
 * Classifies a failed nvidia-smi run (FACTS §1) by its text first, then by exit code (nvidia-smi
 * returns the NVML error code: 9 NVML_ERROR_DRIVER_NOT_LOADED, 18 NVML_ERROR_LIB_RM_VERSION_MISMATCH,
 * 6 NVML_ERROR_NOT_FOUND; see nvml.h `nvmlReturn_t` and nvidia-smi(1) RETURN VALUE).
 * The message keeps nvidia-smi's own words.
 */
export function classifyFailure(output: string, exitCode: number | null): { reason: GpuFailureReason; message: string } {
  const text = output.trim();
  const firstLines = lines(text).slice(0, 3).join(' ');
  if (/version mismatch/i.test(text)) {
    return { reason: 'mismatch', message: firstLines };
  }
  if (/couldn't communicate with the NVIDIA driver|couldn't find libnvidia-ml|driver is not loaded|driver not loaded/i.test(text)) {
    return { reason: 'no-driver', message: firstLines };
  }
  if (/No devices were found/i.test(text)) {
    return { reason: 'no-devices', message: firstLines };
  }
  if (text === '') {
    if (exitCode === 9) return { reason: 'no-driver', message: 'nvidia-smi exited with code 9: the NVIDIA driver is not loaded' };
    if (exitCode === 18) return { reason: 'mismatch', message: 'nvidia-smi exited with code 18: Driver/library version mismatch' };
    return { reason: 'error', message: `nvidia-smi exited with code ${exitCode ?? 'unknown'} and printed nothing` };
  }
  return { reason: 'error', message: `nvidia-smi exited with code ${exitCode ?? 'unknown'}: ${firstLines}` };
}
