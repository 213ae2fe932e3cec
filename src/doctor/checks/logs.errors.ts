import { fillFix } from '../../diagnose/fill-fix.js';
import { type Check, type CheckResult, fail, pass, skip } from '../types.js';
import { noLogFiles, noLogsResult, where } from '../log-view.js';

// logs.errors: the run's logs (or --logs) hold no finding of severity error (see `diagnose`).

const check: Check = {
  id: 'logs.errors',
  title: 'Errors in logs',
  async run(facts): Promise<CheckResult> {
    const logs = await facts.logs();
    if (!logs) return noLogsResult(await facts.noLogs(), true);
    const { scan } = logs;
    if (scan.files === 0) return skip(noLogFiles(logs), { source: logs.label, files: 0, bytes: 0, findings: [] });
    const errors = scan.findings.filter((f) => f.severity === 'error');
    const warnings = scan.findings.filter((f) => f.severity === 'warn');
    const evidence = {
      source: logs.label,
      files: scan.files,
      bytes: scan.bytes,
      findings: scan.findings.map((f) => ({ code: f.code, severity: f.severity, count: f.count, file: f.file, line: f.line })),
    };
    const files = `${scan.files} log file${scan.files === 1 ? '' : 's'} of ${logs.label}`;
    if (errors.length === 0) {
      const w = warnings.length > 0 ? ` (warnings: ${warnings.map((f) => f.code).join(', ')}; see \`dynamo-dev diagnose\`)` : '';
      return pass(`no error finding in ${files}${w}`, evidence);
    }
    const details = errors.map((f) => `${f.code} x${f.count} at ${where(logs, f.file, f.line)}: ${f.text}`);
    return fail(
      `${errors.length} error finding${errors.length === 1 ? '' : 's'} in ${files}: ${errors.map((f) => f.code).join(', ')}`,
      // The first error's fix, for the process whose log it is in.
      fillFix(errors[0].fix, { process: logs.files.find((x) => x.path === errors[0].file)?.process }),
      details,
      evidence,
    );
  },
};

export default check;
