/** opm habits carry over: `alpha` spellings, shell completion, an unknown package is an error. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { COMMUNITY, REPO_ROOT, requireShared } from "../shared.js";

/** Skips (with the reason) without root, or without the real catalogs in ../shared (a failure under CI=true). */
function rootAndShared(): { skip: false | string } {
  if (process.getuid?.() !== 0) return { skip: "needs root to mount a small tmpfs" };
  return requireShared();
}

const BIN = join(REPO_ROOT, "bin", "opcat");
const EXAMPLE = join(REPO_ROOT, "examples", "catalog");

function opcat(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test("opm's alpha spellings run the same commands", () => {
  for (const [alpha, plain] of [
    [
      ["alpha", "list", "packages", EXAMPLE],
      ["list", "packages", EXAMPLE],
    ],
    [
      ["alpha", "list", "bundles", EXAMPLE],
      ["list", "bundles", EXAMPLE],
    ],
    [
      ["alpha", "render-graph", EXAMPLE],
      ["render-graph", EXAMPLE],
    ],
  ]) {
    const a = opcat(alpha);
    const b = opcat(plain);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(a.stdout, b.stdout, alpha.join(" "));
    assert.ok(a.stdout.length > 0);
  }
});

test("render-graph -p with a package the catalog does not have is an error naming the packages there are", () => {
  const r = opcat(["render-graph", EXAMPLE, "-p", "no-such-package"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    /package "no-such-package" is not in .*examples\/catalog \(packages: cache-operator, etcd-example\)/,
  );
});

test("opcat completion bash completes commands, subcommands and flags in a real bash", () => {
  const script = opcat(["completion", "bash"]);
  assert.equal(script.code, 0, script.stderr);
  const file = join(mkdtempSync(join(tmpdir(), "opcat-completion-")), "opcat.bash");
  writeFileSync(file, script.stdout);
  const complete = (words: string[]) => {
    const r = spawnSync(
      "bash",
      [
        "-c",
        `source "$0"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); ` +
          `COMP_CWORD=${words.length - 1}; _opcat; printf '%s\\n' "\${COMPREPLY[@]}"`,
        file,
      ],
      { encoding: "utf8" },
    );
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim().split("\n").sort();
  };
  assert.deepEqual(complete(["opcat", "render"]), ["render", "render-graph", "render-template"]);
  assert.deepEqual(
    complete(["opcat", "cluster", ""]).filter((w) => !w.startsWith("-")),
    ["image", "manifests", "run"],
  );
  assert.ok(complete(["opcat", "render-graph", "--min"]).includes("--minimum-edge"));
  // flag values, and file names after a flag that takes a path
  assert.deepEqual(complete(["opcat", "render", "x", "-o", ""]), ["json", "yaml"]);
  assert.deepEqual(complete(["opcat", "validate", "x", "--output", ""]), ["json", "text", "yaml"]);
  assert.deepEqual(complete(["opcat", "list", "bundles", "x", "-o", "j"]), ["json"]);
  assert.deepEqual(complete(["opcat", "migrate", "--migrate-level", ""]), [
    "all",
    "bundle-object-to-csv-metadata",
    "none",
  ]);
  assert.deepEqual(complete(["opcat", "render", "--cache-dir", `${EXAMPLE}/etcd`]), [`${EXAMPLE}/etcd-example`]);
  // opm's alpha spellings
  assert.deepEqual(
    complete(["opcat", "alpha", ""]).filter((w) => !w.startsWith("-")),
    ["bundle", "convert-template", "list", "render-graph", "render-template", "render-veneer"],
  );
  assert.deepEqual(
    complete(["opcat", "alpha", "list", ""]).filter((w) => !w.startsWith("-")),
    ["bundles", "channels", "packages"],
  );
  assert.deepEqual(complete(["opcat", "alpha", "list", "packages", "x", "-o", ""]), ["json", "text"]);
  assert.deepEqual(complete(["opcat", "alpha", "render-graph", "--min"]), ["--minimum-edge"]);
  assert.deepEqual(complete(["opcat", "alpha", "render-template", "--migrate-l"]), ["--migrate-level"]);
  assert.deepEqual(complete(["opcat", "alpha", "convert-template", "b"]), ["basic"]);
  assert.ok(complete(["opcat", "alpha", "convert-template", "basic", "--"]).includes("--output"));
  assert.match(opcat(["completion", "fish"]).stdout, /-c opcat -n '[^']+' -l 'output' -s 'o' -x -a 'json yaml'/);
  for (const shell of ["zsh", "fish"]) {
    const s = opcat(["completion", shell]);
    assert.equal(s.code, 0);
    assert.match(s.stdout, /opcat/);
  }
  assert.equal(opcat(["completion", "tcsh"]).code, 2);
});

test(
  "non-regular files: a FIFO inside a catalog directory and /dev/zero, " +
    "/dev/urandom as references are refused with a located error, never read",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-fifo-"));
    writeFileSync(join(dir, "catalog.json"), '{"schema":"olm.package","name":"p"}\n');
    const made = spawnSync("mkfifo", [join(dir, "pipe")]);
    assert.equal(made.status, 0, "mkfifo");
    for (const cmd of ["validate", "render", "render-graph"]) {
      const r = spawnSync(process.execPath, [BIN, cmd, dir], { encoding: "utf8", timeout: 60_000 });
      assert.notEqual(r.signal, "SIGTERM", `${cmd} blocked on the FIFO`);
      assert.equal(r.status, 1, `${cmd}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /^pipe: error\[IO_NOT_REGULAR\]: open pipe: not a regular file but a named pipe \(FIFO\)/m,
      );
    }
    for (const dev of ["/dev/zero", "/dev/urandom"]) {
      for (const cmd of ["validate", "render"]) {
        const r = spawnSync(process.execPath, [BIN, cmd, dev], { encoding: "utf8", timeout: 60_000 });
        assert.equal(r.status, 2, `${cmd} ${dev}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`open ${dev}: not a regular file but a character device`));
      }
    }
  },
);

test("non-regular files as serve content, template inputs, --reuse, Inputs, init -i/-d: refused, never read", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-fifo-inputs-"));
  const cat = join(dir, "catalog");
  mkdirSync(cat);
  writeFileSync(join(cat, "catalog.json"), readFileSync(join(EXAMPLE, "etcd-example", "catalog.yaml")));
  assert.equal(spawnSync("mkfifo", [join(cat, "pipe.yaml")]).status, 0, "mkfifo");
  assert.equal(spawnSync("mkfifo", [join(dir, "pipe")]).status, 0, "mkfifo");
  const pipe = join(dir, "pipe");
  const template = join(dir, "basic.yaml");
  writeFileSync(template, "schema: olm.template.basic\nentries: []\n");
  // serve: refused at start-up with the located problem (it used to block forever, saying nothing)
  const serve = spawnSync(process.execPath, [BIN, "serve", cat, "--http", "127.0.0.1:0", "--no-grpc"], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.notEqual(serve.signal, "SIGTERM", "serve blocked on the FIFO");
  assert.equal(serve.status, 1, serve.stderr);
  assert.match(
    serve.stderr,
    /^pipe\.yaml: error\[IO_NOT_REGULAR\]: open pipe\.yaml: not a regular file but a named pipe/m,
  );
  const cases: [string[], RegExp][] = [
    [["template", "render", pipe], /templates are read from regular files only/],
    [["template", "render", "basic", pipe], /templates are read from regular files only/],
    [["template", "render", "basic", template, "--reuse", pipe], /catalogs are read from regular files/],
    [["resolve", "--catalog", EXAMPLE, "--input", pipe], /not a regular file but a named pipe/],
    [["init", "a", "-i", pipe], /icons are read from regular files only/],
    [["init", "a", "-i", "/dev/zero"], /open \/dev\/zero: not a regular file but a character device/],
    [["init", "a", "-d", "/dev/urandom"], /open \/dev\/urandom: not a regular file but a character device/],
  ];
  for (const [args, re] of cases) {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 60_000 });
    assert.notEqual(r.signal, "SIGTERM", `${args.join(" ")} blocked`);
    assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /IO_NOT_REGULAR|not a regular file/, args.join(" "));
    assert.match(r.stderr, re, args.join(" "));
    assert.equal(r.stdout, "");
  }
  rmSync(dir, { recursive: true, force: true });
});

test("standard input that never ends (/dev/zero) is cut at the 256 MiB budget: IO_FILE_TOO_LARGE, exit 2", () => {
  for (const args of [
    ["render", "-"],
    ["template", "render", "-"],
  ]) {
    const zero = openSync("/dev/zero", "r");
    const r = spawnSync(process.execPath, [BIN, ...args], { stdio: [zero, "pipe", "pipe"], encoding: "utf8" });
    assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /open standard input: more than the 256 MiB opcat reads as one/);
  }
});

test("init -i: an icon over 1 MiB is refused before it is read whole (IO_FILE_TOO_LARGE, exit 2)", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-icon-"));
  const icon = join(dir, "icon.png");
  // a real PNG signature, then 2 MiB
  writeFileSync(icon, Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(2 << 20)]));
  const r = opcat(["init", "a", "-i", icon]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /icon\.png: 2097160 bytes is more than the 1 MiB opcat reads as one icon/);
  assert.equal(r.stdout, "");
  writeFileSync(icon, Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(1000)]));
  assert.equal(opcat(["init", "a", "-i", icon]).code, 0);
  rmSync(dir, { recursive: true, force: true });
});

test("--authfile naming a missing file is an error, not silently ignored", () => {
  const r = opcat(["render", EXAMPLE, "--authfile", "/nonexistent/auth.json"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /--authfile \/nonexistent\/auth\.json: no such file/);
});

test(
  "a registry that speaks plain HTTP, pulled over HTTPS, is " +
    "named with what to do (not OpenSSL's 'wrong version number')",
  async () => {
    const { startDockerRegistry } = await import("../image/servers.js");
    const reg = await startDockerRegistry(mkdtempSync(join(tmpdir(), "opcat-plain-registry-")));
    try {
      const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, "image", "inspect", `${reg.host}/x/y:1`], {
          stdio: ["ignore", "ignore", "pipe"],
        });
        let stderr = "";
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
        child.on("close", (code) => resolve({ code: code ?? -1, stderr }));
      });
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        new RegExp(
          `${reg.host.replace(/\./g, "\\.")} speaks plain HTTP, not HTTPS; use ` +
            `--use-http \\(or mark the registry insecure in registries\\.conf\\)`,
        ),
      );
      assert.doesNotMatch(r.stderr, /wrong version number/);
    } finally {
      await reg.stop();
    }
  },
);

test("--push with an oci: tag is a usage error; without --push the layout is written", requireShared(), () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-push-oci-"));
  const bundle = join(COMMUNITY, "operators", "kube-green", "0.7.1");
  const bad = opcat(["bundle", "build", bundle, "-t", `oci:${dir}/layout:1`, "--push"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--push with --tag oci:.*an oci: layout is written locally; drop --push/);
  const ok = opcat(["bundle", "build", bundle, "-t", `oci:${dir}/layout:1`]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^oci:.*@sha256:[0-9a-f]{64}$/m);
});

test("list -o json: the rows of the table as objects", () => {
  const pk = opcat(["list", "packages", EXAMPLE, "-o", "json"]);
  assert.equal(pk.code, 0, pk.stderr);
  assert.deepEqual(JSON.parse(pk.stdout), [
    { name: "cache-operator", displayName: "", defaultChannel: "stable-v1" },
    { name: "etcd-example", displayName: "", defaultChannel: "stable" },
  ]);
  const text = opcat(["list", "bundles", EXAMPLE]).stdout.trim().split("\n").slice(1);
  const rows = JSON.parse(opcat(["list", "bundles", EXAMPLE, "-o", "json"]).stdout) as {
    package: string;
    bundle: string;
    skips: string[];
  }[];
  assert.equal(rows.length, text.length);
  rows.forEach((r, i) => assert.ok(text[i].startsWith(r.package) && text[i].includes(r.bundle), `row ${i}`));
  const ch = JSON.parse(opcat(["list", "channels", EXAMPLE, "etcd-example", "-o", "json"]).stdout) as {
    package: string;
  }[];
  assert.ok(ch.length > 0 && ch.every((c) => c.package === "etcd-example"));
  assert.equal(opcat(["list", "packages", EXAMPLE, "-o", "yaml"]).code, 2);
});

test(
  "an alias bomb (billion laughs) is refused quickly by " +
    "validate, render and template render with go-yaml's message",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-bomb-"));
    const n = "abcdefghij";
    let doc = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (let k = 1; k < 9; k++)
      doc += `${n[k]}: &${n[k]} [${Array(9)
        .fill(`*${n[k - 1]}`)
        .join(",")}]\n`;
    writeFileSync(join(dir, "catalog.yaml"), doc + "schema: olm.package\nname: x\n");
    writeFileSync(join(dir, "template.yaml"), doc + "schema: olm.template.basic\nentries: []\n");
    for (const args of [
      ["validate", dir],
      ["render", join(dir, "catalog.yaml")],
      ["template", "render", join(dir, "template.yaml")],
    ]) {
      const r = opcat(args);
      assert.notEqual(r.code, 0, args.join(" "));
      assert.ok(r.code === 1 || r.code === 2, `${args.join(" ")}: exit ${r.code}`);
      assert.match(r.stderr, /document contains excessive aliasing/, args.join(" "));
    }
  },
);

test("a file that is one huge line is quoted as a short excerpt in errors, not whole (opm echoes all of it)", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-huge-"));
  for (const [name, text] of [
    ["missing-schema", `{"name":"a","x":"${"x".repeat(3_000_000)}"}`],
    ["not-an-object", `["${"x".repeat(3_000_000)}"]`],
  ]) {
    const d = join(dir, name);
    mkdirSync(d);
    writeFileSync(join(d, "catalog.json"), text);
    for (const out of ["text", "json"]) {
      const r = opcat(["validate", d, "-o", out]);
      assert.equal(r.code, 1, `${name} ${out}: ${r.stderr.slice(0, 300)}`);
      const all = r.stdout + r.stderr;
      assert.ok(all.length < 40_000, `${name} -o ${out}: ${all.length} bytes of output`);
      assert.match(all, /characters left out/);
    }
  }
});

test(
  "output that cannot be written (standard output on a full device) is an " +
    "I/O error, exit 2, without a stack trace; a closed pipe ends quietly",
  requireShared(),
  async () => {
    const full = spawnSync(process.execPath, [BIN, "render", join(COMMUNITY, "catalogs", "v4.20")], {
      encoding: "utf8",
      stdio: ["ignore", openSync("/dev/full", "w"), "pipe"],
    });
    assert.equal(full.status, 2, full.stderr);
    assert.match(
      full.stderr,
      /^opcat: error\[IO_WRITE\]: writing standard output \(\/dev\/full\): ENOSPC: no space left on device/,
    );
    assert.doesNotMatch(full.stderr, /\n\s+at /);
    // a reader that stops early: exit 0, nothing on stderr
    const child = spawn(process.execPath, [BIN, "render", join(COMMUNITY, "catalogs", "v4.20")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    await new Promise<void>((r) => child.stdout.once("data", () => r()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    assert.equal(code, 0);
    assert.equal(err, "");
  },
);

test("an operating-system refusal is an I/O error with the path (exit 2), not an internal error", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-enotdir-"));
  writeFileSync(join(dir, "file"), "x");
  // an oci: layout target that is a regular file (was: "internal error … this is a bug in opcat", exit 3)
  const r = opcat(["catalog", "build", EXAMPLE, "-t", `oci:${join(dir, "file")}:v1`, "--base-image", "scratch"]);
  assert.equal(r.code, 2, r.stderr);
  assert.doesNotMatch(r.stderr, /internal error|this is a bug/);
  assert.match(r.stderr, /^opcat: error\[IO_ERROR\]: mkdir .*file\/blobs\/sha256: ENOTDIR: not a directory/);
  assert.match(r.stderr, /hint: a path component is a file where a directory is expected/);
});

test("a read-only or full cache directory is an I/O error naming the " +
  "path and the cause (exit 2), not ENOENT or a path-less write", {
  skip: process.getuid?.() === 0 ? false : "needs root to mount small tmpfs file systems",
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-cache-"));
  const layout = `oci:${join(dir, "layout")}:v1`;
  assert.equal(opcat(["catalog", "build", EXAMPLE, "-t", layout, "--base-image", "scratch"]).code, 0);
  const ro = join(dir, "ro");
  const full = join(dir, "full");
  mkdirSync(ro);
  mkdirSync(full);
  spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", ro]);
  spawnSync("mount", ["-t", "tmpfs", "-o", "size=8k", "tmpfs", full]);
  try {
    // a cache directory under a read-only file system (was: "ENOENT … mkdir")
    const r = opcat(["render", layout, "--cache-dir", join(ro, "cache")]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^opcat: error\\[IO_ERROR\\]: mkdir ${ro}/cache/\\S+: EROFS: ` +
          `cannot create .*: ${ro} is on a read-only file system`,
      ),
    );
    assert.match(r.stderr, /hint: the file system is read-only: choose a writable location \(e\.g\. --cache-dir\)/);
    // a full cache: the file being written is named
    const f = opcat(["render", layout, "--cache-dir", full]);
    assert.equal(f.code, 2, f.stderr);
    assert.match(
      f.stderr,
      new RegExp(`^opcat: error\\[IO_WRITE\\]: write ${full}/\\S+: ENOSPC: no space left on device`),
    );
    assert.match(f.stderr, /hint: the disk is full/);
  } finally {
    spawnSync("umount", [ro]);
    spawnSync("umount", [full]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  "catalog build onto a full disk: a new OCI layout is not left half-written, an existing one keeps its tags",
  rootAndShared(),
  () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-full-layout-"));
    spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]);
    const v420 = join(COMMUNITY, "catalogs", "v4.20");
    try {
      const r = opcat([
        "catalog",
        "build",
        v420,
        "-t",
        `oci:${join(dir, "new")}:v1`,
        "--base-image",
        "scratch",
        "--no-validate",
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /ENOSPC: no space left on device/);
      assert.deepEqual(readdirSync(dir), [], "nothing left: no layout, no temporary directory");
      // an existing layout (here: a small one that fits) keeps its index when a bigger build fails
      const small = mkdtempSync(join(tmpdir(), "opcat-small-"));
      writeFileSync(join(small, "c.json"), JSON.stringify({ schema: "olm.package", name: "p" }));
      const ok = opcat([
        "catalog",
        "build",
        small,
        "-t",
        `oci:${join(dir, "old")}:v1`,
        "--base-image",
        "scratch",
        "--no-validate",
      ]);
      assert.equal(ok.code, 0, ok.stderr);
      const index = readFileSync(join(dir, "old", "index.json"), "utf8");
      const big = opcat([
        "catalog",
        "build",
        v420,
        "-t",
        `oci:${join(dir, "old")}:v2`,
        "--base-image",
        "scratch",
        "--no-validate",
      ]);
      assert.equal(big.code, 2, big.stderr);
      assert.equal(readFileSync(join(dir, "old", "index.json"), "utf8"), index, "the layout's index is as it was");
      rmSync(small, { recursive: true, force: true });
    } finally {
      spawnSync("umount", [dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "migrate onto a full disk leaves nothing behind (written to a temporary sibling, renamed into place)",
  rootAndShared(),
  () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-full-"));
    spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]);
    try {
      const r = opcat(["migrate", join(COMMUNITY, "catalogs", "v4.20"), join(dir, "out")]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^opcat: error\[IO_WRITE\]: write .*out: ENOSPC: no space left on device/);
      assert.match(r.stderr, /hint: the disk is full: free space or write elsewhere; the output is incomplete/);
      assert.deepEqual(readdirSync(dir), [], "no partial output, no temporary directory");
      // and with room it writes the whole catalog
      const ok = opcat(["migrate", EXAMPLE, join(dir, "small")]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.deepEqual(readdirSync(join(dir, "small")).sort(), ["cache-operator", "etcd-example"]);
    } finally {
      spawnSync("umount", [dir]);
    }
  },
);

test(
  "opm serve's flags: --cache-only builds the serve index and exits, " +
    "--cache-enforce-integrity needs a matching one, -p takes a port",
  () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "opcat-serve-cache-"));
    // as opm: no index yet and --cache-enforce-integrity is a failure, not a rebuild
    const missing = opcat(["serve", EXAMPLE, "--cache-only", "--cache-dir", cacheDir, "--cache-enforce-integrity"]);
    assert.equal(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, /integrity check failed: no index yet/);
    const build = opcat(["serve", EXAMPLE, "--cache-only", "--cache-dir", cacheDir]);
    assert.equal(build.code, 0, build.stderr);
    assert.match(build.stderr, /"index":"written"/);
    const ok = opcat(["serve", EXAMPLE, "--cache-only", "--cache-dir", cacheDir, "--cache-enforce-integrity"]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /"index":"read"/);
    assert.match(ok.stderr, /--cache-only: the catalogs load and are valid; serve indexes are up to date/);
    const noDir = opcat(["serve", EXAMPLE, "--cache-only", "--cache-enforce-integrity"]);
    assert.equal(noDir.code, 2);
    assert.match(noDir.stderr, /--cache-dir must be specified with --cache-enforce-integrity/);
    const bad = opcat(["serve", EXAMPLE, "-p", "notaport"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid --port "notaport": expected a port number/);
    const none = opcat(["serve", EXAMPLE, "-p", "50051", "--no-grpc"]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--port \(gRPC\) and --no-grpc exclude each other/);
  },
);

test("a JSON catalog file with a UTF-8 byte order mark is read whole (opm drops every blob but the first)", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-bom-"));
  const blobs = [
    '{"schema":"olm.package","name":"a","defaultChannel":"s"}',
    '{"schema":"olm.channel","name":"s","package":"a","entries":[{"name":"a.v1"}]}',
    '{"schema":"olm.bundle","name":"a.v1","package":"a","image":"x","properties":' +
      '[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}',
  ];
  writeFileSync(join(dir, "catalog.json"), "\uFEFF" + blobs.join("\n") + "\n");
  const v = opcat(["validate", dir]);
  assert.equal(v.code, 0, v.stderr);
  const r = opcat(["render", dir, "-o", "json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((r.stdout.match(/"schema"/g) ?? []).length, 3);
});

test(
  "a registry that accepts the connection and then sends nothing is " +
    "given up on within --timeout, naming it and what was awaited (exit 2)",
  async () => {
    const { createServer } = await import("node:net");
    const sockets: import("node:net").Socket[] = [];
    const server = createServer((c) => {
      sockets.push(c);
      c.on("data", () => {}); // reads the request, never answers
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as import("node:net").AddressInfo).port;
    try {
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            BIN,
            "render",
            `127.0.0.1:${port}/stalled/catalog:v1`,
            "--use-http",
            "--timeout",
            "3s",
            "--idle-timeout",
            "500ms",
          ],
          { stdio: ["ignore", "ignore", "pipe"] },
        );
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.once("exit", (code) => resolve({ code, stderr }));
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `reading manifest v1 in 127\\.0\\.0\\.1:${port}/stalled/catalog: gave up on 127\\.0\\.0\\.1:${port} ` +
            `after \\d+ attempts? within 3 s: no data from 127\\.0\\.0\\.1:${port} for 0\\.5 s \\(idle timeout\\)`,
        ),
      );
      assert.ok(sockets.length >= 1);
      const bad = opcat(["render", `127.0.0.1:${port}/x:y`, "--timeout", "soon"]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /invalid --timeout "soon"/);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
    }
  },
);

test(
  "a catalog file over the 256 MiB budget is refused before it " +
    "is read, with a located error (a sparse file: no disk used)",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-big-"));
    const f = join(dir, "catalog.json");
    writeFileSync(f, "");
    truncateSync(f, 300 * (1 << 20));
    const v = opcat(["validate", dir]);
    assert.equal(v.code, 1, v.stderr);
    assert.match(
      v.stderr,
      /^catalog\.json: error\[IO_FILE_TOO_LARGE\]: open catalog\.json: 314572800 bytes is more than the 256 MiB/,
    );
    const r = opcat(["render", f]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /IO_FILE_TOO_LARGE|is more than the 256 MiB/);
  },
);

test(
  "serve --kubeconfig naming a missing file, or --context " + "without it, is a usage error before anything is served",
  () => {
    const missing = opcat(["serve", EXAMPLE, "--kubeconfig", "/nonexistent/kubeconfig"]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /--kubeconfig "\/nonexistent\/kubeconfig": no such file/);
    const ctx = opcat(["serve", EXAMPLE, "--context", "admin"]);
    assert.equal(ctx.code, 2, ctx.stderr);
    assert.match(ctx.stderr, /--context needs --kubeconfig/);
  },
);

test("a pipe handed to opcat as standard input stays blocking while a command that does not read it runs", {
  skip: process.platform !== "linux" && "reads the flags of the child's fd 0 in /proc",
}, async () => {
  // O_NONBLOCK belongs to the pipe's file description, shared with the other readers of the pipe: set by
  // opcat, `opcat render a | cmp - <(opcat render b)` failed in cmp with "Resource temporarily unavailable"
  const args = ["serve", EXAMPLE, "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"];
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["pipe", "ignore", "pipe"] });
  let err = "";
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  await new Promise<void>((res) => {
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes('"msg":"serving"')) res();
    });
    child.on("exit", () => res());
  });
  assert.match(err, /"msg":"serving"/);
  const fdinfo = readFileSync(`/proc/${child.pid}/fdinfo/0`, "utf8");
  child.kill("SIGTERM");
  await exited;
  const flags = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(fdinfo)?.[1] ?? "", 8);
  assert.ok(!Number.isNaN(flags), fdinfo);
  assert.equal(flags & 0o4000, 0, `O_NONBLOCK set on fd 0 (flags ${flags.toString(8)})`);
});

test("what opcat writes honours the umask as opm does: migrate, catalog build to a new OCI layout", () => {
  const modes = (umask: string): Record<string, string> => {
    const dir = mkdtempSync(join(tmpdir(), "opcat-umask-"));
    const run = (args: string[]) => {
      const r = spawnSync("sh", ["-c", `umask ${umask} && exec "$@"`, "sh", process.execPath, BIN, ...args], {
        encoding: "utf8",
      });
      assert.equal(r.status, 0, r.stderr);
    };
    run(["migrate", EXAMPLE, join(dir, "out"), "-o", "yaml"]);
    run(["catalog", "build", EXAMPLE, "-t", `oci:${join(dir, "layout")}:v1`, "--base-image", "scratch"]);
    const out: Record<string, string> = {};
    for (const p of ["out", "out/etcd-example", "out/etcd-example/catalog.yaml", "layout", "layout/blobs/sha256"])
      out[p] = (statSync(join(dir, p)).mode & 0o777).toString(8);
    for (const f of [
      "index.json",
      "oci-layout",
      ...readdirSync(join(dir, "layout", "blobs", "sha256")).map((b) => `blobs/sha256/${b}`),
    ])
      out[`layout/${f.startsWith("blobs/") ? "blobs/sha256/<blob>" : f}`] = (
        statSync(join(dir, "layout", f)).mode & 0o777
      ).toString(8);
    return out;
  };
  // directories 0777 and files 0666, less the umask (opm's WriteFS; go-containerregistry's layout)
  const want = (d: string, f: string) => ({
    out: d,
    "out/etcd-example": d,
    "out/etcd-example/catalog.yaml": f,
    layout: d,
    "layout/blobs/sha256": d,
    "layout/index.json": f,
    "layout/oci-layout": f,
    "layout/blobs/sha256/<blob>": f,
  });
  assert.deepEqual(modes("022"), want("755", "644"));
  assert.deepEqual(modes("002"), want("775", "664"));
});

test("a file inside a catalog that cannot be read (a symlink loop, permission denied) is an I/O error: exit 2", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-unreadable-"));
  chmodSync(dir, 0o755);
  const loop = join(dir, "loop");
  cpSync(EXAMPLE, loop, { recursive: true });
  symlinkSync("self", join(loop, "self"));
  const denied = join(dir, "denied");
  cpSync(EXAMPLE, denied, { recursive: true });
  writeFileSync(join(denied, "secret.json"), '{"schema":"olm.package","name":"secret"}\n');
  chmodSync(join(denied, "secret.json"), 0o000);
  // root reads any file: the permission case runs as nobody then
  const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const cases: [string, RegExp][] = [
    [loop, /^self: error\[IO_ERROR\]: open self: too many levels of symbolic links/m],
    [denied, /^secret\.json: error\[IO_ERROR\]: open secret\.json: permission denied/m],
  ];
  for (const [cat, re] of cases) {
    for (const args of [
      ["validate", cat],
      ["validate", cat, "-o", "json"],
      ["render", cat],
      ["render-graph", cat],
      ["list", "packages", cat],
      ["migrate", cat, join(dir, `out-${basename(cat)}`)],
      ["catalog", "build", cat, "-t", `oci:${join(dir, `layout-${basename(cat)}`)}:v1`, "--base-image", "scratch"],
      ["serve", cat, "--http", "127.0.0.1:0", "--no-grpc"],
    ]) {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 60_000, ...as });
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
      if (!args.includes("json")) assert.match(r.stderr, re, args.join(" "));
      else assert.match(r.stdout, /IO_ERROR/);
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

test("init -i with a file that is not an image, or empty, exits 1 as opm does (invalid content)", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-init-icon-"));
  writeFileSync(join(dir, "notes.txt"), "not an image\n");
  writeFileSync(join(dir, "empty.png"), "");
  for (const [file, re] of [
    ["notes.txt", /detected invalid type "[^"]*": not an image/],
    ["empty.png", /detect icon mediatype: Empty buffer/],
  ] as const) {
    const r = opcat(["init", "pkg", "-i", join(dir, file)]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, re);
    assert.equal(r.stdout, "");
  }
});

test("an unknown --migrate-level lists the levels; -o yml suggests yaml (usage errors, exit 2)", () => {
  const level = opcat(["render", EXAMPLE, "--migrate-level", "bogus"]);
  assert.equal(level.code, 2);
  assert.match(
    level.stderr,
    /unknown migration level "bogus"\n {2}hint: valid levels: none, bundle-object-to-csv-metadata, all\n/,
  );
  const near = opcat(["migrate", EXAMPLE, "out", "--migrate-level", "bundle-object-to-csv-metdata"]);
  assert.match(near.stderr, /hint: did you mean "bundle-object-to-csv-metadata"\?/);
  for (const args of [
    ["render", EXAMPLE, "-o", "yml"],
    ["template", "render", "basic", "t.yaml", "-o", "yml"],
    ["resolve", "--catalog", EXAMPLE, "--input", "in.yaml", "-o", "yml"],
  ]) {
    const r = opcat(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, /invalid --output value "yml", expected \([a-z|]+\)\n {2}hint: did you mean "yaml"\?/);
  }
  const json = opcat(["render", EXAMPLE, "-o", "yml", "-o", "json"]);
  assert.equal(json.code, 2);
  const far = opcat(["render", EXAMPLE, "-o", "xml"]);
  assert.doesNotMatch(far.stderr, /did you mean/);
});
