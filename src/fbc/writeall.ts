/**
 * Writing every byte or failing: `fs.writeSync` returns how much it wrote, and on a nearly full disk
 * that is less than asked (the next write fails with ENOSPC). A writer that ignores the count leaves
 * a truncated file and reports success; this one writes the rest, so the failure surfaces.
 */
import { writeSync } from "node:fs";

/** Writes all of `data` to `fd` at its current position; throws the system's error (ENOSPC, EIO…). */
export function writeAllSync(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let off = 0;
  while (off < buf.length) {
    const n = writeSync(fd, buf, off, buf.length - off);
    if (n === 0) {
      const e: NodeJS.ErrnoException = new Error("EIO: i/o error, write returned 0 bytes");
      e.code = "EIO";
      e.syscall = "write";
      throw e;
    }
    off += n;
  }
}
