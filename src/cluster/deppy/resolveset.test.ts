/**
 * The resolveset provisioner's steps, each outcome a named case: the unpack of resolveset Bundles
 * (class, unpacked, entries) and the resolveset Instance's (unpacked, entries, entryBundles, conflicts,
 * classes, entriesUnpacked, approval, packageInstances, installed). The real provisioner runs on the
 * in-memory API server (runtime/controllerkit.test.ts) as the controllers' own marked user, with the
 * requester record opcat's admission webhook writes (rukpak/webhook.ts) done by the fake's admission;
 * resolvesets are written by the real ResolvesetWriter. What RukPak's controllers do (unpacking entry
 * Bundles, installing package Instances) is written into their status by the cases.
 */
import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeKube, type FakeResource } from "../kube/fake.js";
import { API_VERSION as RUKPAK, type Bundle, type Instance } from "../rukpak/api.js";
import { recordRequester } from "../rukpak/stepkit.test.js";
import { ownUser, SigningKey } from "../rukpak/trust.js";
import type { ResolvedBundle } from "../../resolve/index.js";
import { condition, customResource, eventsOf, settled } from "../runtime/controllerkit.test.js";
import {
  ANNOTATION_BUNDLE,
  DEPPY_API_VERSION,
  LABEL_PACKAGE,
  RESOLVESET_CLASS,
  resolvesetProvisionerClass,
  type Input,
} from "./api.js";
import { ResolvesetProvisioner } from "./resolveset.js";
import { RESOLVESET_FILE, ResolvesetWriter, resolvesetInstanceName } from "./resolvesetwriter.js";

const SELF = "system:serviceaccount:opcat-system:opcat";
const NS = "opcat-system";
const rbac = (kind: string, plural: string, namespaced: boolean): FakeResource => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  resource: `${plural}.rbac.authorization.k8s.io`,
  namespaced,
});
const RESOURCES = [
  { ...customResource(RUKPAK, "ProvisionerClass", "provisionerclasses"), statusSubresource: false },
  customResource(RUKPAK, "Bundle", "bundles"),
  customResource(RUKPAK, "Instance", "instances"),
  customResource(DEPPY_API_VERSION, "Input", "inputs"),
  rbac("ClusterRole", "clusterroles", false),
  rbac("ClusterRoleBinding", "clusterrolebindings", false),
  rbac("Role", "roles", true),
  rbac("RoleBinding", "rolebindings", true),
];

const entry = (pkg: string, v: string): ResolvedBundle => ({
  schema: "olm.bundle",
  name: `${pkg}.v${v}`,
  package: pkg,
  version: v,
  image: `example.com/${pkg}:v${v}`,
  catalog: "main",
  channel: "stable",
  action: "install",
  requestedBy: [pkg],
  dependencyOf: [],
  dryRun: false,
  relatedImages: [],
  properties: [{ type: "olm.package", value: { packageName: pkg, version: v } }],
});

interface World {
  api: FakeKube;
  /** The controllers' own client (their marked user). */
  own: FakeKube;
  key: SigningKey;
  rs: ResolvesetProvisioner;
  writer: ResolvesetWriter;
  store: string;
  tmp: string;
}

describe("resolveset provisioner steps on the fake API server", () => {
  let w: World;
  const idle = () => settled(w.rs.bundleController.queue, w.rs.instanceController.queue);
  const setup = async (approval = "AllowAll", classParams?: Record<string, unknown>) => {
    const key = new SigningKey(Buffer.alloc(32, 5));
    const api = new FakeKube(RESOURCES, { allowed: [SELF], admit: recordRequester(key) });
    const own = api.impersonating(ownUser({ username: SELF, groups: [] }));
    const tmp = mkdtempSync(join(tmpdir(), "opcat-resolveset-"));
    const store = join(tmp, "store");
    mkdirSync(store);
    await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    const pc = resolvesetProvisionerClass();
    pc.parameters = { ...pc.parameters, approval, ...classParams };
    await api.create(pc);
    const rs = new ResolvesetProvisioner({ client: own, bundleStore: store, key, self: SELF, namespace: NS });
    const writer = new ResolvesetWriter({ client: own, namespace: NS, key, self: SELF });
    w = { api, own, key, rs, writer, store, tmp };
    await rs.start();
  };
  afterEach(async () => {
    await w.rs.stop();
    rmSync(w.tmp, { recursive: true, force: true });
  });

  /** An Input and its resolveset of `bundles`, as the resolver writes them; the resolveset Bundle's name. */
  const resolveset = async (input: string, bundles: ResolvedBundle[]) => {
    const i = await w.api.create<Input>({
      apiVersion: DEPPY_API_VERSION,
      kind: "Input",
      metadata: { name: input },
      spec: { constraints: [] },
    });
    const name = await w.writer.write(i, bundles, false, undefined);
    await idle();
    return name;
  };
  const instance = async (input: string) => {
    await idle();
    return w.api.get<Instance>(RUKPAK, "Instance", resolvesetInstanceName(input));
  };
  const bundle = async (name: string) => {
    await idle();
    return w.api.get<Bundle>(RUKPAK, "Bundle", name);
  };
  const configMap = (name: string, data: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: NS },
    data,
  });
  /** A resolveset Bundle reading its resolveset from ConfigMap `cm` mounted at /content. */
  const mounting = (name: string, cm: string, spec: Partial<Bundle["spec"]> = {}): Bundle => ({
    apiVersion: RUKPAK,
    kind: "Bundle",
    metadata: { name },
    spec: {
      class: RESOLVESET_CLASS,
      refs: [`file://content/${RESOLVESET_FILE}`],
      volumeMounts: [{ mountPath: "/content", configMap: { name: cm, namespace: NS } }],
      ...spec,
    },
  });
  /** An Instance of Bundle `bundle`. */
  const instanceOf = (name: string, bundle: string) =>
    ({ apiVersion: RUKPAK, kind: "Instance", metadata: { name }, spec: { bundle: { name: bundle } } }) as Instance;
  /** RukPak's unpack of an entry Bundle: Done with `digest` (its content stored when `manifests` are given). */
  const unpackEntry = async (name: string, manifests?: Record<string, string>) => {
    const b = await bundle(name);
    const digest = `sha256:${createHash("sha256")
      .update(JSON.stringify(manifests ?? name))
      .digest("hex")}`;
    if (manifests) {
      const dir = join(w.store, digest.replace(":", "-"), "manifests");
      mkdirSync(dir, { recursive: true });
      for (const [f, text] of Object.entries(manifests)) writeFileSync(join(dir, f), text);
    }
    const gen = b.metadata.generation;
    const conditions = [
      { type: "Unpacked", status: "True", reason: "UnpackSuccessful", message: "ok", observedGeneration: gen },
    ];
    await w.api.mergePatch(
      RUKPAK,
      "Bundle",
      name,
      { status: { unpacked: "Done", observedGeneration: gen, digest, format: "plain", conditions } },
      { subresource: "status" },
    );
  };

  describe("the resolveset Bundle's unpack", () => {
    beforeEach(() => setup());

    test("its ConfigMap read: Done, its entries counted, the content's digest", async () => {
      const name = await resolveset("tiny", [entry("tiny", "1.0.0")]);
      const b = await bundle(name);
      const cm = await w.api.get<Bundle & { data: Record<string, string> }>("v1", "ConfigMap", name, NS);
      const digest = `sha256:${createHash("sha256").update(cm.data[RESOLVESET_FILE]).digest("hex")}`;
      assert.deepEqual(
        [b.status?.unpacked, b.status?.message, b.status?.digest, b.status?.format],
        ["Done", "Successfully unpacked the resolveset (1 entry)", digest, "deppy.resolveset"],
      );
      assert.equal(condition(b, "Unpacked").is, "True UnpackSuccessful");
    });

    const broken: [string, Partial<Bundle["spec"]>, string, RegExp][] = [
      [
        "a ref that is not file://",
        { refs: ["docker://example.com/x:v1"] },
        "InvalidRef",
        /^a resolveset Bundle's content is a file:\/\/<path> in a mounted ConfigMap, not docker:/,
      ],
      [
        "a ConfigMap that does not exist",
        { volumeMounts: [{ mountPath: "/content", configMap: { name: "nowhere", namespace: NS } }] },
        "ConfigMapNotFound",
        /^ConfigMap opcat-system\/nowhere \(mounted at \/content\) not found$/,
      ],
      [
        "a path no volume mounts",
        { refs: ["file://elsewhere/x.json"] },
        "FileNotFound",
        /^no volumeMount holds \/elsewhere\/x\.json$/,
      ],
      ["a ConfigMap without the key", { refs: ["file://content/missing.json"] }, "FileNotFound", /has no key missing/],
    ];
    for (const [what, spec, reason, message] of broken)
      test(`${what}: Failed ${reason}, a Warning`, async () => {
        await w.own.create(configMap("cm", {}));
        await w.own.create(mounting("broken", "cm", spec));
        const b = await bundle("broken");
        assert.deepEqual([b.status?.unpacked, b.status?.reason], ["Failed", reason]);
        assert.match(b.status?.message ?? "", message);
        assert.deepEqual(await eventsOf(w.api, "broken"), [`Warning ${reason}`]);
      });

    test("content that does not parse: Failed InvalidResolveset", async () => {
      await w.own.create(configMap("junk", { [RESOLVESET_FILE]: "{ not json" }));
      await w.own.create(mounting("junk", "junk"));
      const b = await bundle("junk");
      assert.deepEqual([b.status?.unpacked, b.status?.reason], ["Failed", "InvalidResolveset"]);
    });

    for (const [what, mayRead, unpacked, reason] of [
      ["may get it: read", true, "Done", "UnpackSuccessful"],
      ["may not: not read, ConfigMapNotReadable", false, "Failed", "ConfigMapNotReadable"],
    ] as const)
      test(`a Bundle someone else made, whose ConfigMap they ${what}`, async () => {
        await w.own.create(configMap("theirs", { [RESOLVESET_FILE]: "" }));
        w.api.authorize = (u, a) =>
          u.username === SELF || (u.username === "alice" && (mayRead || a.resource !== "configmaps"));
        await w.api.impersonating({ username: "alice" }).create(mounting("theirs", "theirs"));
        const b = await bundle("theirs");
        assert.deepEqual([b.status?.unpacked, b.status?.reason], [unpacked, reason]);
        if (!mayRead)
          assert.equal(
            b.status?.message,
            "ConfigMap opcat-system/theirs cannot be read for alice (it does not exist or they may not get it)",
          );
      });
  });

  describe("the resolveset Instance", () => {
    const ENTRY = "tiny.v1.0.0";
    const RS = resolvesetInstanceName("tiny");
    const REF = "docker://example.com/tiny:v1.0.0";
    const hashed = `${ENTRY}-${createHash("sha256").update(REF).digest("hex").slice(0, 8)}`;
    const installPackage = async (name: string, bundleName: string) => {
      const conditions = [{ type: "Installed", status: "True", reason: "InstallationSucceeded", message: "ok" }];
      await w.api.mergePatch(
        RUKPAK,
        "Instance",
        name,
        { status: { activeBundle: bundleName, conditions } },
        { subresource: "status" },
      );
    };

    test("AllowAll: an entry Bundle, then approval, a package Instance, and Installed once it is", async () => {
      await setup("AllowAll");
      const rsName = await resolveset("tiny", [entry("tiny", "1.0.0")]);
      const waiting = await instance("tiny");
      assert.deepEqual(condition(waiting, "Unpacked"), {
        is: "False UnpackPending",
        message: `waiting for ${ENTRY} to be unpacked`,
      });
      const eb = await bundle(ENTRY);
      assert.deepEqual(eb.spec, { class: "olm.bundle", refs: [REF] });
      assert.deepEqual(
        [eb.metadata.labels?.[LABEL_PACKAGE], eb.metadata.annotations?.[ANNOTATION_BUNDLE]],
        ["tiny", ENTRY],
      );
      assert.deepEqual(
        eb.metadata.ownerReferences?.map((o) => o.name),
        [resolvesetInstanceName("tiny")],
      );
      await unpackEntry(ENTRY);
      const approved = await instance("tiny");
      assert.deepEqual(condition(approved, "Approved"), {
        is: "True AllowAll",
        message: `approved by ProvisionerClass ${RESOLVESET_CLASS} (approval: AllowAll)`,
      });
      assert.deepEqual(condition(approved, "Installed"), {
        is: "False Installing",
        message: `waiting for tiny (installing ${ENTRY})`,
      });
      const pkg = await w.api.get<Instance>(RUKPAK, "Instance", "tiny");
      assert.deepEqual(pkg.spec, { selector: { matchLabels: { [LABEL_PACKAGE]: "tiny" } }, bundle: { name: ENTRY } });
      assert.equal(condition(pkg, "Approved").is, "True ResolvesetApproved");
      assert.ok(pkg.status?.approval, "a signed approval for the package Instance");
      await installPackage("tiny", ENTRY);
      const done = await instance("tiny");
      assert.deepEqual(condition(done, "Installed"), {
        is: "True InstallationSucceeded",
        message: `Instantiated resolveset ${rsName}: ${ENTRY}`,
      });
      assert.equal(done.status?.activeBundle, rsName);
      assert.deepEqual(done.status?.objects, [{ apiVersion: RUKPAK, kind: "Instance", name: "tiny" }]);
      assert.ok((await eventsOf(w.api, resolvesetInstanceName("tiny"))).includes("Normal Installed"));
    });

    test("the resolveset Bundle failed to unpack: Unpacked UnpackFailed with why", async () => {
      await setup();
      await w.own.create(mounting("rs-broken", "nowhere"));
      await w.own.create(instanceOf("rs-broken", "rs-broken"));
      await idle();
      const i = await w.api.get<Instance>(RUKPAK, "Instance", "rs-broken");
      assert.deepEqual(condition(i, "Unpacked"), {
        is: "False UnpackFailed",
        message: "resolveset rs-broken: ConfigMap opcat-system/nowhere (mounted at /content) not found",
      });
    });

    test("an entry Bundle that failed to unpack: Unpacked UnpackFailed, no approval", async () => {
      await setup();
      await resolveset("tiny", [entry("tiny", "1.0.0")]);
      await w.api.mergePatch(
        RUKPAK,
        "Bundle",
        ENTRY,
        { status: { unpacked: "Failed", message: "no such image" } },
        { subresource: "status" },
      );
      const i = await instance("tiny");
      assert.deepEqual(condition(i, "Unpacked"), { is: "False UnpackFailed", message: `${ENTRY}: no such image` });
      assert.deepEqual(condition(i, "Approved"), {});
    });

    test("a Bundle of the entry's name someone else made: the entry gets one of a hashed name", async () => {
      await setup();
      await w.api.create<Bundle>({
        apiVersion: RUKPAK,
        kind: "Bundle",
        metadata: { name: ENTRY },
        spec: { class: "x", refs: [REF] },
      });
      await resolveset("tiny", [entry("tiny", "1.0.0")]);
      assert.deepEqual((await bundle(hashed)).spec, { class: "olm.bundle", refs: [REF] });
      assert.equal(condition(await instance("tiny"), "Unpacked").message, `waiting for ${ENTRY} to be unpacked`);
    });

    test("both names taken by someone else: Installed BundleConflict, a Warning", async () => {
      await setup();
      for (const name of [ENTRY, hashed])
        await w.api.create<Bundle>({
          apiVersion: RUKPAK,
          kind: "Bundle",
          metadata: { name },
          spec: { class: "x", refs: [REF] },
        });
      await resolveset("tiny", [entry("tiny", "1.0.0")]);
      const i = await instance("tiny");
      assert.deepEqual(condition(i, "Installed"), {
        is: "False BundleConflict",
        message:
          `${ENTRY} (Bundles ${ENTRY} and ${hashed} exist and were not made by opcat for it): ` +
          "delete those Bundles or ask their owner to",
      });
      assert.ok((await eventsOf(w.api, resolvesetInstanceName("tiny"))).includes("Warning BundleConflict"));
    });

    test("a class with no ProvisionerClass for the entries: Installed NoMatchingClass, a Warning", async () => {
      await setup("AllowAll", { matchBundle: [], matchSchema: [] });
      await resolveset("tiny", [entry("tiny", "1.0.0")]);
      const i = await instance("tiny");
      assert.deepEqual(condition(i, "Installed"), {
        is: "False NoMatchingClass",
        message:
          `no ProvisionerClass for ${ENTRY} (schema olm.bundle): add a matchBundle or matchSchema entry to ` +
          `ProvisionerClass ${RESOLVESET_CLASS}`,
      });
      assert.ok((await eventsOf(w.api, resolvesetInstanceName("tiny"))).includes("Warning NoMatchingClass"));
    });

    /** Approvals not given: the approval, Approved (`status reason`, and its message where given), the Event. */
    const unapproved: [string, string, string | { is: string; message: string }, string?][] = [
      [
        "DenyAll: AwaitingApproval, an Event, no package Instance",
        "DenyAll",
        {
          is: "False AwaitingApproval",
          message: `every change needs review (approval: DenyAll): kubectl instance approve ${RS}`,
        },
        "Normal AwaitingApproval",
      ],
      ["Android, the entries' content not stored: PermissionsUnknown", "Android", "False PermissionsUnknown"],
    ];
    for (const [what, approval, approved, event] of unapproved)
      test(what, async () => {
        await setup(approval);
        await resolveset("tiny", [entry("tiny", "1.0.0")]);
        await unpackEntry(ENTRY);
        const i = await instance("tiny");
        if (typeof approved === "string") assert.equal(condition(i, "Approved").is, approved);
        else assert.deepEqual(condition(i, "Approved"), approved);
        assert.equal(await w.api.tryGet(RUKPAK, "Instance", "tiny"), undefined);
        if (event) assert.ok((await eventsOf(w.api, resolvesetInstanceName("tiny"))).includes(event));
      });

    const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny\n  namespace: default\n";
    const role =
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: tiny\n" +
      'rules:\n- apiGroups: [""]\n  resources: [secrets]\n  verbs: [get]\n';
    const binding =
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: tiny\n" +
      "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tiny}\n" +
      "subjects:\n- {kind: ServiceAccount, name: tiny, namespace: default}\n";
    test("Android, a first install granting nothing: NoNewPermissions, approved", async () => {
      await setup("Android");
      await resolveset("tiny", [entry("tiny", "1.0.0")]);
      await unpackEntry(ENTRY, { "cm.yaml": cm });
      const i = await instance("tiny");
      assert.equal(condition(i, "Approved").is, "True NoNewPermissions");
      assert.ok(await w.api.tryGet(RUKPAK, "Instance", "tiny"));
    });

    test("Android, a first install granting permissions: NewPermissions listed, waits for a person", async () => {
      await setup("Android");
      await resolveset("tiny", [entry("tiny", "1.0.0")]);
      await unpackEntry(ENTRY, { "role.yaml": role, "binding.yaml": binding });
      const i = await instance("tiny");
      assert.equal(condition(i, "Approved").is, "False NewPermissions");
      const permissions = (i.status as { permissions?: string[] }).permissions ?? [];
      assert.ok(permissions.length > 0 && permissions.every((p) => p.startsWith(`${ENTRY} (new install): `)));
      assert.match(permissions.join("\n"), /secrets/);
      assert.equal(await w.api.tryGet(RUKPAK, "Instance", "tiny"), undefined);
    });

    test("a package Instance someone else made: never taken over, Installing says so", async () => {
      await setup("AllowAll");
      await w.api.create(instanceOf("tiny", "other"));
      await resolveset("tiny", [entry("tiny", "1.0.0")]);
      await unpackEntry(ENTRY);
      const i = await instance("tiny");
      assert.deepEqual(condition(i, "Installed"), {
        is: "False Installing",
        message: "waiting for tiny (Instance tiny exists and was not made by opcat: delete it first)",
      });
      assert.equal((await w.api.get<Instance>(RUKPAK, "Instance", "tiny")).spec.bundle.name, "other");
    });
  });
});
