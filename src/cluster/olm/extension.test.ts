/**
 * The ClusterExtension controller's steps (ownership, requester, configuration, resolution, namespace,
 * instance, and the conditions read from the Instance), each outcome a named case: the real controller
 * on the in-memory API server (runtime/controllerkit.test.ts), its informers watching it, resolving
 * over what a real ClusterCatalog controller serves from catalog images on disk. The Instance is
 * written as the ClusterExtension's author through the fake's impersonation, judged by its list of
 * allowed users.
 */
import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { FakeKube } from "../kube/fake.js";
import { CATALOG_API_VERSION } from "../catalogd/api.js";
import { type CatalogBeside, catalogBeside, startBeside, stopBeside } from "../catalogd/catalogkit.test.js";
import { API_VERSION as RUKPAK, type Instance } from "../rukpak/api.js";
import { SigningKey } from "../rukpak/trust.js";
import { recordRequester, requestedBy } from "../rukpak/stepkit.test.js";
import { condition, customResource, fbc, settled } from "../runtime/controllerkit.test.js";
import { OLM_API_VERSION, type ClusterExtension } from "./api.js";
import {
  ANNOTATION_BUNDLE_NAME,
  ANNOTATION_BUNDLE_REFERENCE,
  ANNOTATION_BUNDLE_VERSION,
  ANNOTATION_ROLLOUT_STARTED,
  bundleObjectName,
  CLUSTER_EXTENSION_CLASS,
  ExtensionController,
  instanceNameFor,
} from "./extension.js";

const RESOURCES = [
  customResource(CATALOG_API_VERSION, "ClusterCatalog", "clustercatalogs"),
  customResource(OLM_API_VERSION, "ClusterExtension", "clusterextensions"),
  customResource(RUKPAK, "Instance", "instances"),
];
const DEPRECATED = JSON.stringify({
  schema: "olm.deprecations",
  package: "old",
  entries: [{ reference: { schema: "olm.package" }, message: "old is deprecated: use tiny" }],
});
const CATALOG = [fbc.package("tiny", ["1.0.0", "1.1.0"]), fbc.package("old", ["1.0.0"]), DEPRECATED].join("\n");
const IMAGE = "example.com/tiny:v1.1.0";
/** What a case checks after its conditions. */
type Then = () => Promise<void>;

interface World extends CatalogBeside {
  api: FakeKube;
  ctl: ExtensionController;
  key: SigningKey;
}

describe("ClusterExtension steps on the fake API server", () => {
  let w: World;
  const idle = () => settled(w.catalogs.queue, w.ctl.queue);
  beforeEach(async () => {
    const key = new SigningKey(Buffer.alloc(32, 9));
    // the webhook's signed requester on Instances, which tells an Instance of its own from another's
    const api = new FakeKube(RESOURCES, { allowed: ["alice"], admit: recordRequester(key) });
    await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tiny-system" } });
    const { catalogs, tmp } = await catalogBeside(api, "opcat-extension-", CATALOG);
    const ctl = new ExtensionController({ client: api, catalogs, key });
    w = { api, catalogs, ctl, key, tmp };
  });
  afterEach(() => stopBeside(w, w.ctl));
  const start = () => startBeside(w, w.ctl);
  const extension = (name: string, spec: Partial<ClusterExtension["spec"]> & { packageName?: string } = {}) => {
    const { packageName = "tiny", ...rest } = spec;
    return {
      apiVersion: OLM_API_VERSION,
      kind: "ClusterExtension",
      metadata: { name },
      spec: {
        namespace: "tiny-system",
        source: { sourceType: "Catalog", catalog: { packageName } },
        ...rest,
      },
    } as ClusterExtension;
  };
  const create = async (ext: ClusterExtension, by: string | null = "alice") => {
    await w.api.create(by ? requestedBy(w.key, ext, by) : ext);
    return get(ext.metadata.name);
  };
  const get = async (name: string) => {
    await idle();
    return w.api.get<ClusterExtension>(OLM_API_VERSION, "ClusterExtension", name);
  };
  const instanceOf = (name: string) => w.api.get<Instance>(RUKPAK, "Instance", instanceNameFor(name));
  /** The Instance's status as RukPak would write it for its current generation. */
  const instanceStatus = async (name: string, status: Record<string, unknown>) => {
    const inst = await instanceOf(name);
    const gen = inst.metadata.generation;
    const conditions = (status.conditions as Record<string, unknown>[] | undefined)?.map((c) => ({
      observedGeneration: gen,
      lastTransitionTime: "2026-01-01T00:00:00Z",
      ...c,
    }));
    await w.api.mergePatch(
      RUKPAK,
      "Instance",
      inst.metadata.name,
      { status: { ...status, conditions, observedGeneration: gen } },
      { subresource: "status" },
    );
    return get(name);
  };
  const installedStatus = (name: string) =>
    instanceOf(name).then((inst) =>
      instanceStatus(name, {
        activeBundle: inst.spec.bundle.name,
        conditions: [{ type: "Installed", status: "True", reason: "InstallationSucceeded", message: "done" }],
      }),
    );

  describe("ownership, requester, configuration", () => {
    test("an Instance of its name that it does not own: Blocked, nothing installed, left alone", async () => {
      await w.api.create({
        apiVersion: RUKPAK,
        kind: "Instance",
        metadata: { name: instanceNameFor("taken") },
        spec: { bundle: { name: "x" } },
      });
      await start();
      const ext = await create(extension("taken"));
      assert.deepEqual(condition(ext, "Progressing"), {
        is: "False Blocked",
        message:
          `Instance ${instanceNameFor("taken")} exists and does not belong to this ClusterExtension; ` +
          "opcat never takes over an object it did not create",
      });
      assert.deepEqual(condition(ext, "Installed"), { is: "False Failed", message: "No bundle installed" });
    });

    test("its own Instance whose owner reference was dropped: still its own, the reference back", async () => {
      await start();
      const ext = await create(extension("mine"));
      const before = await instanceOf("mine");
      assert.equal(before.metadata.ownerReferences?.[0]?.uid, ext.metadata.uid);
      // anyone who may update Instances may drop owner references (as the garbage collector does)
      await w.api.mergePatch(RUKPAK, "Instance", before.metadata.name, { metadata: { ownerReferences: null } });
      const after = await get("mine").then(() => instanceOf("mine"));
      assert.deepEqual(
        after.metadata.ownerReferences?.map((o) => o.uid),
        [ext.metadata.uid],
      );
      assert.equal(
        after.metadata.annotations?.[ANNOTATION_ROLLOUT_STARTED],
        before.metadata.annotations?.[ANNOTATION_ROLLOUT_STARTED],
        "the rollout is not restarted",
      );
      assert.notEqual(condition(await get("mine"), "Progressing").is, "False Blocked");
    });

    test("an Instance of its name without owners, requested by someone else: Blocked", async () => {
      await start();
      await w.api.create(
        requestedBy(
          w.key,
          {
            apiVersion: RUKPAK,
            kind: "Instance",
            metadata: { name: instanceNameFor("squat") },
            spec: { bundle: { name: "x" } },
          } as Instance,
          "mallory",
        ),
      );
      const ext = await create(extension("squat"));
      assert.equal(condition(ext, "Progressing").is, "False Blocked");
      assert.equal((await instanceOf("squat")).spec.bundle.name, "x");
    });

    test("an author that cannot be verified: Blocked, no Instance", async () => {
      await start();
      const ext = await create(extension("unsigned"), null);
      assert.equal(condition(ext, "Progressing").is, "False Blocked");
      assert.match(condition(ext, "Progressing").message ?? "", /^who created or last changed this ClusterExtension/);
      assert.equal(await w.api.tryGet(RUKPAK, "Instance", instanceNameFor("unsigned")), undefined);
    });

    test("an inline configuration with an unknown field: InvalidConfiguration, no Instance", async () => {
      await start();
      const ext = await create(
        extension("badconfig", { config: { configType: "Inline", inline: { nonsense: true } } } as never),
      );
      assert.equal(condition(ext, "Progressing").is, "False InvalidConfiguration");
      assert.equal(
        condition(ext, "Progressing").message,
        'invalid ClusterExtension configuration: invalid configuration: unknown field "nonsense"',
      );
      assert.equal(await w.api.tryGet(RUKPAK, "Instance", instanceNameFor("badconfig")), undefined);
    });
  });

  describe("resolution and namespace", () => {
    test("before every ClusterCatalog was tried: no status; once they were, resolved", async () => {
      await w.ctl.start();
      await w.api.create(requestedBy(w.key, extension("early"), "alice"));
      await idle();
      assert.equal((await w.api.get<ClusterExtension>(OLM_API_VERSION, "ClusterExtension", "early")).status, undefined);
      await w.catalogs.start();
      const ext = await get("early");
      assert.equal(condition(ext, "Progressing").is, "True RollingOut");
    });

    /** Each case: the ClusterExtension, its conditions (`status reason`, with the message where given), then. */
    const cases: [string, ClusterExtension, Record<string, string | { is: string; message: string }>, Then?][] = [
      [
        "a package no catalog serves: Retrying with why, deprecation unknown, no Instance",
        extension("ghost", { packageName: "ghost" }),
        {
          Progressing: { is: "True Retrying", message: 'no bundles found for package "ghost"' },
          Deprecated: "Unknown DeprecationStatusUnknown",
          BundleDeprecated: "Unknown Absent",
        },
        async () => assert.equal(await w.api.tryGet(RUKPAK, "Instance", instanceNameFor("ghost")), undefined),
      ],
      [
        "an install namespace that does not exist: Retrying until it does",
        extension("homeless", { namespace: "nowhere" }),
        { Progressing: { is: "True Retrying", message: 'failed to install: namespaces "nowhere" not found' } },
        async () => {
          await w.api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "nowhere" } });
          assert.equal(condition(await get("homeless"), "Progressing").is, "True RollingOut");
        },
      ],
      [
        "a deprecated package: Deprecated and PackageDeprecated with the catalog's message",
        extension("old", { packageName: "old" }),
        {
          PackageDeprecated: { is: "True Deprecated", message: "old is deprecated: use tiny" },
          Deprecated: "True Deprecated",
          ChannelDeprecated: "False NotDeprecated",
        },
      ],
    ];
    for (const [what, ext, conditions, then] of cases)
      test(what, async () => {
        await start();
        const got = await create(ext);
        for (const [type, want] of Object.entries(conditions))
          if (typeof want === "string") assert.equal(condition(got, type).is, want, type);
          else assert.deepEqual(condition(got, type), want, type);
        await then?.();
      });
  });

  describe("instance", () => {
    test("the Instance of the resolved bundle, written as the author; RollingOut until it installs", async () => {
      await start();
      const ext = await create(extension("tiny"));
      const inst = await instanceOf("tiny");
      assert.deepEqual(inst.spec.bundle, {
        name: bundleObjectName("tiny", "tiny.v1.1.0", IMAGE),
        spec: { class: CLUSTER_EXTENSION_CLASS, refs: [`docker://${IMAGE}`] },
      });
      assert.equal(inst.spec.installNamespace, "tiny-system");
      assert.deepEqual(
        inst.metadata.ownerReferences?.map((r) => [r.kind, r.uid]),
        [["ClusterExtension", ext.metadata.uid]],
      );
      const a = inst.metadata.annotations ?? {};
      assert.deepEqual(
        [a[ANNOTATION_BUNDLE_NAME], a[ANNOTATION_BUNDLE_VERSION], a[ANNOTATION_BUNDLE_REFERENCE]],
        ["tiny.v1.1.0", "1.1.0", IMAGE],
      );
      const writes = w.api.requestLog.filter((r) => r.resource === "instances" && r.verb === "create");
      assert.deepEqual(
        writes.map((r) => r.user),
        ["alice"],
      );
      assert.deepEqual(condition(ext, "Progressing"), {
        is: "True RollingOut",
        message: `Instance ${instanceNameFor("tiny")} is installing bundle tiny.v1.1.0`,
      });
      assert.deepEqual(condition(ext, "Installed"), { is: "False Failed", message: "No bundle installed" });
      assert.equal(condition(ext, "Deprecated").is, "False NotDeprecated");
    });

    test("an author the API server refuses: Retrying, she is told, no Instance", async () => {
      await start();
      const ext = await create(extension("refused"), "mallory");
      assert.equal(condition(ext, "Progressing").is, "True Retrying");
      assert.match(
        condition(ext, "Progressing").message ?? "",
        new RegExp(`^mallory may not write Instance ${instanceNameFor("refused")}, .*is forbidden: User "mallory"`),
      );
      assert.equal(await w.api.tryGet(RUKPAK, "Instance", instanceNameFor("refused")), undefined);
    });

    test("the Instance installed: Installed Succeeded, Desired state reached, status.install", async () => {
      await start();
      await create(extension("done"));
      const ext = await installedStatus("done");
      assert.deepEqual(condition(ext, "Installed"), {
        is: "True Succeeded",
        message: `Installed bundle ${IMAGE} successfully`,
      });
      assert.deepEqual(condition(ext, "Progressing"), { is: "True Succeeded", message: "Desired state reached" });
      assert.deepEqual(ext.status?.install, { bundle: { name: "tiny.v1.1.0", version: "1.1.0" } });
      assert.equal(condition(ext, "BundleDeprecated").is, "False NotDeprecated");
    });

    test("installed, then its catalog deleted: the bundle stays installed, Desired state reached", async () => {
      await start();
      await create(extension("kept"));
      await installedStatus("kept");
      await w.api.delete(CATALOG_API_VERSION, "ClusterCatalog", "main");
      const ext = await get("kept");
      assert.equal(condition(ext, "Installed").is, "True Succeeded");
      assert.deepEqual(condition(ext, "Progressing"), { is: "True Succeeded", message: "Desired state reached" });
    });

    const fromInstance: [string, Record<string, unknown>, string, RegExp][] = [
      [
        "waiting for approval",
        { type: "Approved", status: "False", reason: "AwaitingApproval", message: "approve me" },
        "True Retrying",
        /^Instance clusterextension-wait waits for approval \(AwaitingApproval\): approve me; kubectl instance/,
      ],
      [
        "an approval's dry run that failed",
        { type: "Approved", status: "False", reason: "DryRunFailed", message: "would be refused" },
        "True Retrying",
        /^Instance clusterextension-wait: would be refused$/,
      ],
      [
        "unpacking failed",
        { type: "Unpacked", status: "False", reason: "UnpackFailed", message: "no such image" },
        "True Retrying",
        /^Instance clusterextension-wait: UnpackFailed: no such image$/,
      ],
      [
        "a configuration the bundle refuses",
        { type: "Installed", status: "False", reason: "InvalidConfiguration", message: "watchNamespace is required" },
        "False InvalidConfiguration",
        /^invalid ClusterExtension configuration: watchNamespace is required$/,
      ],
      [
        "installation failed",
        { type: "Installed", status: "False", reason: "InstallFailed", message: "a collision" },
        "True Retrying",
        /^Instance clusterextension-wait: InstallFailed: a collision$/,
      ],
    ];
    for (const [name, cond, is, message] of fromInstance)
      test(`Progressing from the Instance: ${name}`, async () => {
        await start();
        await create(extension("wait"));
        const ext = await instanceStatus("wait", { conditions: [cond] });
        assert.equal(condition(ext, "Progressing").is, is);
        assert.match(condition(ext, "Progressing").message ?? "", message);
      });

    test("progressDeadlineMinutes past since the rollout started: ProgressDeadlineExceeded", async () => {
      await start();
      await create(extension("slow", { progressDeadlineMinutes: 10 }));
      const started = { [ANNOTATION_ROLLOUT_STARTED]: "2020-01-01T00:00:00.000Z" };
      await w.api.mergePatch(RUKPAK, "Instance", instanceNameFor("slow"), { metadata: { annotations: started } });
      const ext = await get("slow");
      assert.deepEqual(condition(ext, "Progressing"), {
        is: "False ProgressDeadlineExceeded",
        message: "installation has not completed within 10 minutes (progressDeadlineMinutes)",
      });
    });
  });
});
