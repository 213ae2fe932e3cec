/** Which kind of GPU a name is: decides whether the CUDA forward-compatibility libraries can work. */
export type GpuClass = 'datacenter' | 'consumer' | 'jetson' | 'unknown';

// Which GPUs can use the CUDA forward-compatibility libraries (FACTS §2): only data-center GPUs,
// select NGC-ready RTX SKUs and Jetson. GeForce and laptop GPUs never can: loading a compat
// libcuda.so.1 on them gives Error 804 ("forward compatibility was attempted on non supported HW").
//
// Judged from the marketing name nvidia-smi prints. Professional RTX / Quadro cards are
// 'unknown': only some SKUs are NGC-ready, and the name does not say which, so a check must not
// claim either way for them.

/** Laptop and consumer names: never support forward compatibility. */
const CONSUMER = [/\bLaptop\b/i, /\bMax-Q\b/i, /\bMobile\b/i, /\bGeForce\b/i, /\bTITAN\b/i, /\b[GR]TX\s?\d{3,4}\b(?!.*\bAda\b)/i];

/** Jetson modules (nvidia-smi / tegrastats names like "Orin (nvgpu)"). */
const JETSON = [/\bJetson\b/i, /\bOrin\b/i, /\bXavier\b/i, /\bTegra\b/i, /\bThor\b/i];

/** Professional workstation cards: forward compat only on select NGC-ready SKUs. */
const PROFESSIONAL = [/\bQuadro\b/i, /\bRTX\s+(PRO\s+)?A?\d{3,4}\b/i, /\bRTX\s+A\d{3,4}\b/i, /\bAda Generation\b/i, /\bRTX PRO\b/i];

/** Data-center products (Tesla line and its successors). Word boundaries keep A100 from matching A1000. */
const DATACENTER = [
  /\bTesla\b/i,
  /\b(A100|A800|A30|A40|A10G?|A16|A2|H100|H200|H800|H20|GH200|B100|B200|B300|GB200|GB300|L4|L40S?|L20|T4|V100|P100|P40|P4|K80|M60|M40)\b/i,
  /\bDGX\b/i,
];

export function gpuClass(name: string | null | undefined): GpuClass {
  if (!name) return 'unknown';
  if (JETSON.some((r) => r.test(name))) return 'jetson';
  // GeForce / laptop first: "NVIDIA GeForce RTX 4060 Laptop GPU" must never look professional.
  if (CONSUMER.some((r) => r.test(name)) && !/\bQuadro\b|\bRTX\s+A\d|\bAda Generation\b|\bRTX PRO\b/i.test(name)) return 'consumer';
  // A professional card in a laptop ("RTX A2000 Laptop GPU", "Quadro T1000 with Max-Q Design") is still a laptop GPU;
  // "RTX PRO 6000 Blackwell Max-Q Workstation Edition" is a desktop card.
  if (/\bLaptop\b|\bMax-Q\b(?! Workstation Edition\b)|\bMobile\b/i.test(name)) return 'consumer';
  if (PROFESSIONAL.some((r) => r.test(name))) return 'unknown';
  if (DATACENTER.some((r) => r.test(name))) return 'datacenter';
  return 'unknown';
}

/** True when forward-compat libraries are known to work on this class. */
export function supportsForwardCompat(c: GpuClass): boolean {
  return c === 'datacenter' || c === 'jetson';
}
