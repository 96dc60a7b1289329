// What went wrong with a file a user named, in words: Node's fs errors read
// "ENOENT: no such file or directory, open '/x'", which repeats the path and shows the code.
export function fsProblem(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ENOENT': return 'no such file or folder';
    case 'ENOTDIR': return 'a part of the path is a file, not a folder';
    case 'EISDIR': return 'it is a folder, not a file';
    case 'EACCES': case 'EPERM': return 'permission denied';
    case 'EROFS': return 'read-only file system';
    default: return (e?.message ?? String(err)).split('\n')[0]!;
  }
}
