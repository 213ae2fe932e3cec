// Node's errno codes as people read them, with the code kept (searchable): `EACCES: permission denied`.

/** errno codes as people read them. */
export function errnoText(code: string | undefined): string {
  const words: Record<string, string> = {
    EACCES: 'permission denied', EPERM: 'operation not permitted', ENOTDIR: 'a part of the path is a file',
    EROFS: 'read-only file system', ENOSPC: 'no space left on the device', ELOOP: 'too many symbolic links', EIO: 'input/output error',
  };
  return code ? (words[code] ? `${code}: ${words[code]}` : code) : 'unknown error';
}
