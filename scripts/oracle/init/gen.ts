/**
 * Regenerates the outputs of src/fbc/testdata/init/vectors.json by running the real opm:
 * `opm init <name_> [-c defaultChannel] [-d <file with description>] [-i <file with icon>]`.
 * The inputs (`name_`, `defaultChannel`, `description`, base64 `icon`) are the vectors' own fields
 * (hand-written cases for every h2non/filetype matcher and random bytes, fixed once); the outputs are
 * opm's: `json` (its stdout), or `error` (the message of its fatal log line), and `mime`, the type
 * h2non/filetype detected as opm reports it (the icon's mediatype, the type in `detected invalid
 * type "…"`, `ERR <message>` when detection failed, "" without an icon).
 *
 *   node --import tsx scripts/oracle/init/gen.ts           # rewrites vectors.json
 *   node --import tsx scripts/oracle/init/gen.ts --check   # exits 1 if the committed bytes differ
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkOrWrite, fatalMessage, runOpm } from "../opm/run.js";

interface InitVector {
  name: string;
  name_?: string;
  defaultChannel?: string;
  description?: string;
  icon?: string;
  mime?: string;
  error?: string;
  json?: string;
}

const OUT = new URL("../../../src/fbc/testdata/init/vectors.json", import.meta.url);
const inputs = JSON.parse(readFileSync(OUT, "utf8")) as InitVector[];
const tmp = mkdtempSync(join(tmpdir(), "opm-init-"));
const vectors: InitVector[] = [];
try {
  for (const v of inputs) {
    const args = ["init", v.name_ ?? ""];
    if (v.defaultChannel !== undefined) args.push("--default-channel", v.defaultChannel);
    if (v.description !== undefined) {
      writeFileSync(join(tmp, "README.md"), v.description);
      args.push("--description", join(tmp, "README.md"));
    }
    if (v.icon !== undefined) {
      writeFileSync(join(tmp, "icon"), Buffer.from(v.icon, "base64"));
      args.push("--icon", join(tmp, "icon"));
    }
    const r = runOpm(args);
    const out: InitVector = { name: v.name };
    for (const k of ["name_", "defaultChannel", "description", "icon"] as const) if (v[k] !== undefined) out[k] = v[k];
    if (r.status !== 0) {
      const error = fatalMessage(r.stderr);
      const invalid = /^detected invalid type "(.*)": not an image$/.exec(error);
      const failed = /^detect icon mediatype: (.*)$/.exec(error);
      out.mime = invalid ? invalid[1] : failed ? `ERR ${failed[1]}` : "";
      out.error = error;
    } else {
      const json = r.stdout.toString("utf8");
      out.mime = json === "" ? "" : ((JSON.parse(json) as { icon?: { mediatype: string } }).icon?.mediatype ?? "");
      out.json = json;
    }
    vectors.push(out);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
checkOrWrite(OUT, `${JSON.stringify(vectors, null, 1)}\n`);
