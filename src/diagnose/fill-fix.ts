// Fixes from the signature table name MODEL, PROCESS and RUN where the place decides them. Pure, and
// small on purpose: `up`'s report and doctor load it without the signature table.

/**
 * A signature's fix for one place: the table's placeholders filled where the caller knows them
 * (MODEL: the run's model, PROCESS: the process whose log matched, RUN: its run), so the command can be pasted.
 * One unknown stays a placeholder for the user to fill.
 */
export function fillFix(fix: string, at: { model?: string | null; process?: string | null; run?: string | null }): string {
  let s = fix;
  if (at.model) s = s.replace(/\bMODEL\b/g, at.model);
  if (at.process) s = s.replace(/\bPROCESS\b/g, at.process);
  if (at.run) s = s.replace(/\bRUN\b/g, at.run);
  return s;
}
