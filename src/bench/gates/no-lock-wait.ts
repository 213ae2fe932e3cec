import { type Gate, verdict } from './types.js';

// A worker that waited on the model's download lock started late (or never): "Still waiting to
// acquire lock on ..." every 10 s (huggingface_hub), "Lock acquisition failed" (hf-hub crate)
// (FACTS §6; diagnose's hf.lock-wait / hf.lock-failed).

const gate: Gate = {
  id: 'hf.no-lock-wait',
  title: 'no worker waited on a download lock',
  judge(f) {
    const evidence = { findings: f.lockWaits };
    if (f.lockWaits.length === 0) return verdict('pass', 'no lock wait in the run\'s logs', evidence);
    const first = f.lockWaits[0];
    return verdict('fail', `${first.code} in ${first.file}:${first.line} (x${first.count}): ${first.text}`, evidence);
  },
};

export default gate;
