/**
 * The controllers' own mark and what it decides (docs/security.md): whom an Instance is judged as,
 * and who may change what the controllers made. The real API server's side (the webhook signing the
 * impersonated mark) is in test/cluster/attacks.test.ts ("trust 1").
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, KubeObject } from "../kube/client.js";
import { ANNOTATION_REQUESTER, API_VERSION, type Instance } from "./api.js";
import { contentRequesterOf, judgedAs, type RukpakContext } from "./context.js";
import {
  ANNOTATION_REQUESTER_SIGNATURE,
  EXTRA_CONTROLLERS,
  isOwn,
  ownUser,
  requesterParts,
  SigningKey,
} from "./trust.js";
import { AdmissionHandler } from "./webhook.js";
import type { Requester } from "./permissions.js";

const key = new SigningKey(Buffer.alloc(32, 7));
const SELF = "opcat-controller";
const me: Requester = { username: SELF, groups: ["system:masters"] };
const admin: Requester = { username: "admin", groups: ["system:masters"] };
const carol: Requester = { username: "carol", groups: ["dev-team"] };

/** An Instance whose requester annotation the webhook would have written and signed for `r`. */
function signedInstance(name: string, r: Requester, extra: Partial<Instance["metadata"]> = {}): Instance {
  const spec = { bundle: { name: `${name}-b` } } as Instance["spec"];
  const value = JSON.stringify(r);
  return {
    apiVersion: API_VERSION,
    kind: "Instance",
    metadata: {
      name,
      uid: `uid-${name}`,
      ...extra,
      annotations: {
        [ANNOTATION_REQUESTER]: value,
        [ANNOTATION_REQUESTER_SIGNATURE]: key.sign(requesterParts("Instance", name, spec, value)),
      },
    },
    spec,
  };
}

/** A client any use of which fails the test: the decisions here need no API server. */
const noClient = new Proxy({} as KubeClient, {
  get: (_t, p) => {
    throw new Error(`the API server was asked (${String(p)})`);
  },
});
const ctx = { key, self: SELF, client: noClient } as unknown as RukpakContext;

describe("the controllers' own mark", () => {
  test("ownUser marks the controllers' identity; only that identity with the mark is their own", () => {
    const own = ownUser(me);
    assert.deepEqual(own.extra?.[EXTRA_CONTROLLERS], ["controllers"]);
    assert.equal(isOwn(own, SELF), true);
    assert.equal(isOwn(me, SELF), false, "a person using the controllers' credentials is not their own mark");
    assert.equal(isOwn({ ...carol, extra: own.extra }, SELF), false, "the mark on another user counts for nothing");
    assert.equal(isOwn(own, undefined), false);
  });

  test("an Instance is judged as its signed requester, never through its owner references", async () => {
    const delegating = [{ apiVersion: "operators.coreos.com/v1", kind: "Operator", name: "admins", uid: "uid-admins" }];
    // made by the controllers for their own purposes, naming an admin's Operator as owner: nobody
    const nested = signedInstance("nested", ownUser(me), { ownerReferences: delegating });
    assert.equal(await judgedAs(ctx, nested), undefined);
    // the same without owner references: still nobody (never the controllers' own rights)
    assert.equal(await judgedAs(ctx, signedInstance("bare", ownUser(me))), undefined);
    // a person running the controllers with their own credentials: themselves
    assert.equal((await judgedAs(ctx, signedInstance("laptop", me)))?.username, SELF);
    // a tenant's, whatever owner she names
    assert.equal(
      (await judgedAs(ctx, signedInstance("hers", carol, { ownerReferences: delegating })))?.username,
      "carol",
    );
    // a signature copied onto another name does not verify
    const copied = signedInstance("x", admin);
    assert.equal(await judgedAs(ctx, { ...copied, metadata: { ...copied.metadata, name: "y" } }), undefined);
    const bundle = { ...signedInstance("b", ownUser(me)), kind: "Bundle" } as unknown as Parameters<
      typeof contentRequesterOf
    >[1];
    assert.equal(await contentRequesterOf(ctx, bundle), undefined);
  });
});

describe("the webhook keeps what the controllers made theirs", () => {
  const handler = new AdmissionHandler(noClient, key, SELF);
  const review = (user: Requester, old: KubeObject, obj: KubeObject) =>
    handler.validate({
      uid: "r1",
      kind: { group: "rukpak.io", version: "v1", kind: obj.kind },
      resource: { group: "rukpak.io", version: "v1", resource: "instances" },
      operation: "UPDATE",
      userInfo: { username: user.username, groups: user.groups },
      object: obj,
      oldObject: old,
    });
  const made = signedInstance("made", ownUser(me), {
    ownerReferences: [{ apiVersion: API_VERSION, kind: "Instance", name: "outer", uid: "uid-outer" }],
    finalizers: ["example.com/f"],
  });
  const withMeta = (m: Partial<Instance["metadata"]>): Instance => ({ ...made, metadata: { ...made.metadata, ...m } });

  for (const [what, obj] of [
    [
      "an added owner reference",
      withMeta({
        ownerReferences: [
          ...(made.metadata.ownerReferences ?? []),
          { apiVersion: "operators.coreos.com/v1", kind: "Operator", name: "admins", uid: "u" },
        ],
      }),
    ],
    [
      "a replaced owner reference",
      withMeta({
        ownerReferences: [{ apiVersion: "operators.coreos.com/v1", kind: "Operator", name: "admins", uid: "u" }],
      }),
    ],
    ["a new label", withMeta({ labels: { a: "b" } })],
    ["a changed annotation", withMeta({ annotations: { ...made.metadata.annotations, note: "x" } })],
    ["a changed spec", { ...made, spec: { bundle: { name: "other" } } } as Instance],
    ["an added finalizer", withMeta({ finalizers: ["example.com/f", "example.com/g"] })],
  ] as const)
    test(`${what} by anyone but the controllers is refused`, async () => {
      const r = await review(admin, made, obj);
      assert.equal(r.allowed, false, what);
      assert.match(r.status?.message ?? "", /made by opcat's controllers and only they may change it/);
    });

  test("dropping owner references or finalizers (the garbage collector's changes) is allowed", async () => {
    const gc: Requester = { username: "system:serviceaccount:kube-system:generic-garbage-collector", groups: [] };
    assert.equal((await review(gc, made, withMeta({ ownerReferences: [] }))).allowed, true);
    assert.equal((await review(gc, made, withMeta({ finalizers: [] }))).allowed, true);
  });

  test("editing olm.properties (seed 002: change the properties of an installed bundle) is allowed", async () => {
    const edited = withMeta({ annotations: { ...made.metadata.annotations, "olm.properties": "[]" } });
    assert.equal((await review(admin, made, edited)).allowed, true);
  });

  test("a change to an object a user made is not this rule's business", async () => {
    const hers = signedInstance("hers", carol);
    // spec unchanged: allowed without asking the API server anything
    assert.equal(
      (await review(admin, hers, { ...hers, metadata: { ...hers.metadata, labels: { a: "b" } } })).allowed,
      true,
    );
  });
});

test("an object without a name (generateName) is refused with why, not signed over an empty name", async () => {
  const handler = new AdmissionHandler(noClient, key, SELF);
  const out = await handler.mutate({
    uid: "r2",
    kind: { group: "rukpak.io", version: "v1", kind: "Instance" },
    resource: { group: "rukpak.io", version: "v1", resource: "instances" },
    operation: "CREATE",
    userInfo: { username: "tenant", groups: ["system:authenticated"] },
    object: { apiVersion: API_VERSION, kind: "Instance", metadata: { name: "", generateName: "mine-" } },
  });
  assert.equal(out.allowed, false);
  assert.equal(out.status?.code, 400);
  assert.match(out.status?.message ?? "", /generateName is not supported.*set metadata\.name/);
});
