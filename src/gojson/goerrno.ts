/**
 * Go's texts for the system call errors a Node `fs` call reports by errno code (what a Go
 * `*fs.PathError` prints after `op path: `), the one table for every message that must read like opm's.
 */

/** syscall.Errno.Error() on linux for the codes Node's fs reports. */
const GO_ERRNO_TEXT: Readonly<Record<string, string>> = {
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  EIO: "input/output error",
  EACCES: "permission denied",
  EBUSY: "device or resource busy",
  EEXIST: "file exists",
  ENOTDIR: "not a directory",
  EISDIR: "is a directory",
  EINVAL: "invalid argument",
  EMFILE: "too many open files",
  ENOSPC: "no space left on device",
  EROFS: "read-only file system",
  ENAMETOOLONG: "file name too long",
  ENOTEMPTY: "directory not empty",
  ELOOP: "too many levels of symbolic links",
};

/** Go's text for the errno of a failed Node fs call, or the error's own message for anything else. */
export function goErrnoText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string" && Object.hasOwn(GO_ERRNO_TEXT, code)) return GO_ERRNO_TEXT[code];
  return e instanceof Error ? e.message : String(e);
}

/** A Go `*fs.PathError` text: `open <path>: no such file or directory`. */
export function goPathError(op: string, path: string, e: unknown): string {
  return `${op} ${path}: ${goErrnoText(e)}`;
}
