import { accessSync, constants } from 'node:fs';

/** Whether this user may execute `file` (access(2) X_OK; false when it is missing). */
export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
