// Cases for the structdecode oracle: hand-picked and random (seeded) JSON texts for each Go type,
// printed as a JSON array of {type, text, dup?} (dup: the text repeats a key in some object).
// Objects are built as lists of [key, value] pairs so that keys can repeat.
let seed = 20261125;
const rnd = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];

class Obj {
  constructor(pairs) {
    this.pairs = pairs;
  }
}
const o = (rec) => new Obj(Object.entries(rec));

function enc(v, ws) {
  const sp = ws ? pick(["", " ", "\n  ", "\t"]) : "";
  if (v instanceof Obj)
    return "{" + sp + v.pairs.map(([k, x]) => JSON.stringify(k) + sp + ":" + sp + enc(x, ws)).join("," + sp) + sp + "}";
  if (Array.isArray(v)) return "[" + sp + v.map((x) => enc(x, ws)).join("," + sp) + sp + "]";
  if (typeof v === "object" && v !== null && "lit" in v) return v.lit;
  return JSON.stringify(v);
}

const scalars = [
  "",
  "x",
  "ab\u00e9",
  0,
  1,
  -7,
  1.5,
  { lit: "1e3" },
  { lit: "-0" },
  { lit: "2147483648" },
  { lit: "99999999999999999999" },
  true,
  false,
  null,
];
function randomValue(depth = 0) {
  const r = rnd();
  if (depth > 2 || r < 0.6) return pick(scalars);
  if (r < 0.8) return Array.from({ length: Math.floor(rnd() * 3) }, () => randomValue(depth + 1));
  return new Obj(
    Array.from({ length: Math.floor(rnd() * 3) }, () => [pick(["a", "name", "B", "image"]), randomValue(depth + 1)]),
  );
}

function caseVariant(k) {
  const r = rnd();
  if (r < 0.3) return k.toUpperCase();
  if (r < 0.5) return k[0].toUpperCase() + k.slice(1);
  if (r < 0.7 && /[sk]/.test(k)) return k.replace(/s/, "\u017f").replace(/k/, "\u212a");
  if (r < 0.85) return [...k].map((c) => (rnd() < 0.5 ? c.toUpperCase() : c)).join("");
  return k + "x";
}

/** All [container, index] positions of object pairs and array items, for mutation. */
function positions(v, out = []) {
  if (v instanceof Obj) v.pairs.forEach((p, i) => (out.push({ obj: v, i }), positions(p[1], out)));
  else if (Array.isArray(v)) v.forEach((x, i) => (out.push({ arr: v, i }), positions(x, out)));
  return out;
}

const clone = (v) =>
  v instanceof Obj ? new Obj(v.pairs.map(([k, x]) => [k, clone(x)])) : Array.isArray(v) ? v.map(clone) : v;

function mutate(base, type) {
  const v = clone(base);
  // A CRD's apiVersion and kind select the decoder (opm checks them first): mutate its spec only.
  const root = type.startsWith("crd.") ? v.pairs.find(([k]) => k === "spec")[1] : v;
  let dup = false;
  const n = 1 + Math.floor(rnd() * 3);
  for (let m = 0; m < n; m++) {
    const ps = positions(root);
    if (ps.length === 0) break;
    const p = pick(ps);
    const r = rnd();
    if (p.obj) {
      const pair = p.obj.pairs[p.i];
      if (r < 0.45) pair[1] = randomValue();
      else if (r < 0.65) pair[0] = caseVariant(pair[0]);
      else if (r < 0.75) p.obj.pairs.splice(p.i, 0, [pick(["zz", "unknown", "other"]), randomValue()]);
      else if (r < 0.88) {
        p.obj.pairs.splice(p.i + (rnd() < 0.5 ? 1 : 0), 0, [
          rnd() < 0.5 ? pair[0] : caseVariant(pair[0]),
          randomValue(),
        ]);
        dup = true;
      } else p.obj.pairs.splice(p.i, 1);
    } else {
      if (r < 0.6) p.arr[p.i] = randomValue();
      else if (r < 0.8) p.arr.push(clone(p.arr[p.i]));
      else p.arr.splice(p.i, 1);
    }
  }
  return { v, dup };
}

const prop = (type, value) => o({ type, value });
const B64 = ["", "eyJhIjoxfQ==", "eyJhIjoxfQ", "ab=c", "YQ==\n", "####", "YWJj\r\nZGVm", "YQ=x"];
const bases = {
  "property.GVK": [o({ group: "g", kind: "K", version: "v1" })],
  "property.Package": [
    o({ packageName: "p", version: "1.0.0" }),
    o({ packageName: "p", version: "1.0.0", release: "1" }),
  ],
  "property.BundleObject": B64.map((data) => o({ data })),
  "[]declcfg.RelatedImage": [[o({ name: "a", image: "r/a:1" }), o({ image: "r/b" })], []],
  "declcfg.Package": [
    o({
      schema: "olm.package",
      name: "p",
      defaultChannel: "stable",
      icon: o({ base64data: "YWJj", mediatype: "image/png" }),
      description: "d",
      properties: [prop("t", o({ a: 1 }))],
    }),
    o({ schema: "olm.package", name: "p", icon: o({ base64data: pick(B64) }) }),
  ],
  "declcfg.Channel": [
    o({
      schema: "olm.channel",
      name: "stable",
      package: "p",
      entries: [o({ name: "a" }), o({ name: "b", replaces: "a", skips: ["x", "y"], skipRange: "<1.0.0" })],
      properties: [prop("t", [1, 2])],
    }),
  ],
  "declcfg.Bundle": [
    o({
      schema: "olm.bundle",
      name: "b",
      package: "p",
      image: "r/b:1",
      properties: [
        prop("olm.package", o({ packageName: "p", version: "1.0.0" })),
        prop("olm.gvk", o({ group: "g", kind: "K", version: "v1" })),
      ],
      relatedImages: [o({ name: "x", image: "r/x" })],
    }),
  ],
  "declcfg.Deprecation": [
    o({
      schema: "olm.deprecations",
      package: "p",
      entries: [
        o({ reference: o({ schema: "olm.bundle", name: "b" }), message: "m" }),
        o({ reference: o({ schema: "olm.package" }), message: "" }),
      ],
    }),
  ],
  "registry.PropertiesFile": [o({ properties: [prop("olm.gvk", o({ group: "g" })), prop("x", "y")] })],
  "registry.AnnotationsFile": [
    o({
      annotations: o({
        "operators.operatorframework.io.bundle.package.v1": "p",
        "operators.operatorframework.io.bundle.channels.v1": "a,b",
        "operators.operatorframework.io.bundle.channel.default.v1": "a",
        other: "x",
      }),
    }),
  ],
  "registry.csvSpec": [
    o({
      install: o({
        strategy: "deployment",
        spec: o({
          deployments: [
            o({
              name: "d",
              spec: o({
                template: o({
                  spec: o({ containers: [o({ name: "c", image: "r/c" })], initContainers: [o({ image: "r/i" })] }),
                }),
              }),
            }),
          ],
        }),
      }),
      version: "1.0.0",
    }),
  ],
  "crd.v1": [
    o({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      spec: o({
        group: "g.io",
        names: o({ plural: "as", kind: "A" }),
        versions: [o({ name: "v1" }), o({ name: "v2" })],
      }),
    }),
  ],
  "crd.v1beta1": [
    o({
      apiVersion: "apiextensions.k8s.io/v1beta1",
      kind: "CustomResourceDefinition",
      spec: o({ group: "g.io", names: o({ plural: "as", kind: "A" }), version: "v1", versions: [o({ name: "v1" })] }),
    }),
  ],
  "v1alpha1.ClusterServiceVersion": [
    o({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: o({ name: "x.v1", annotations: o({ a: "b" }), creationTimestamp: "2020-01-01T00:00:00Z" }),
      spec: o({
        version: "1.0.0",
        release: "1",
        minKubeVersion: "1.20.0",
        keywords: ["k"],
        installModes: [o({ type: "OwnNamespace", supported: true })],
        customresourcedefinitions: o({
          owned: [o({ name: "a.g", version: "v1", kind: "A", statusDescriptors: [o({ path: "p", value: [1] })] })],
        }),
        apiservicedefinitions: o({ owned: [o({ name: "a", containerPort: 443 })] }),
        webhookdefinitions: [
          o({
            type: "ValidatingAdmissionWebhook",
            targetPort: 8443,
            rules: [o({ operations: ["CREATE"], scope: "*" })],
          }),
        ],
        install: o({
          strategy: "deployment",
          spec: o({
            deployments: [
              o({ name: "d", spec: o({ replicas: 1, strategy: o({ rollingUpdate: o({ maxSurge: "25%" }) }) }) }),
            ],
          }),
        }),
      }),
    }),
  ],
};

// Hand-picked texts (syntax errors, top-level kinds, duplicates that Go decodes twice).
const hand = [
  ["property.GVK", ""],
  ["property.GVK", "   "],
  ["property.GVK", "{"],
  ["property.GVK", '{"group":"g"} x'],
  ["property.GVK", '{"group":"g"}\n'],
  ["property.GVK", '{"group":"g"} \u00e9'],
  ["property.GVK", "{} '"],
  ["property.GVK", '{}"x"'],
  ["property.GVK", "{}\u0001"],
  ["property.GVK", "{}\u2028"],
  ["property.GVK", "{}\u{1F600}"],
  ["property.GVK", '{"group":tru'],
  ["property.GVK", '{"group":1.'],
  ["property.GVK", '{"group":-'],
  ["property.GVK", '{"group":"abc'],
  ["property.GVK", "null"],
  ["property.GVK", "[]"],
  ["property.GVK", '"s"'],
  ["property.GVK", '{"group":1,"group":"g"}', true],
  ["property.GVK", '{"group":"g","GROUP":1}', true],
  ["property.GVK", '{"Group":"a","group":"b"}', true],
  ["property.GVK", '{"\u212aind":"k"}'],
  ["property.GVK", '{"group":"\u00e9\u{1F600}","kind":1}'],
  ["property.GVK", '{"group":"\u00e9","kind":{"a":1}}'],
  ["v1alpha1.ClusterServiceVersion", '{"metadata":{"name":"\u00e9","creationTimestamp":5}}'],
  ["v1alpha1.ClusterServiceVersion", '{"spec":{"webhookdefinitions":[{"targetPort":"x"},{"targetPort":1.5}]}}'],
  ["property.Package", '{"packageName":"p","release":null}'],
  ["declcfg.Package", '{"icon":null}'],
  ["declcfg.Package", '{"icon":{}}'],
  ["declcfg.Package", '{"icon":{"base64data":null}}'],
  ["declcfg.Package", '{"icon":{"base64data":""}}'],
  ["declcfg.Package", '{"icon":{"base64data":"YQ=="},"icon":{"mediatype":"m"}}', true],
  ["declcfg.Channel", '{"entries":[{"name":"a","skips":["x"]}],"entries":[{"replaces":"b"}]}', true],
  ["declcfg.Channel", '{"entries":[{"name":"a"},{"name":"b"}],"entries":[{"replaces":"c"}]}', true],
  ["declcfg.Channel", '{"entries":[]}'],
  ["declcfg.Channel", '{"entries":null}'],
  ["declcfg.Bundle", '{"properties":[{"type":"t","value":null}]}'],
  ["declcfg.Bundle", '{"properties":[{"type":"t","value": { "a" : [1, 2] } }]}'],
  ["declcfg.Bundle", '{"properties":[{"type":"t"}]}'],
  ["declcfg.Bundle", '{"properties":[null]}'],
  ["declcfg.Bundle", '{"relatedImages":[{"name":1,"image":[]}]}'],
  ["declcfg.Deprecation", '{"entries":[{"reference":null}]}'],
  ["declcfg.Deprecation", '{"entries":[{"reference":"x"}]}'],
  [
    "registry.csvSpec",
    '{"install":{"spec":{"deployments":[{"spec":{"template":{"spec":{"containers":[{"image":5}]}}}}]}}}',
  ],
  ["registry.csvSpec", '{"Install":{"Strategy":"deployment"}}'],
  ["registry.csvSpec", '{"install":"x"}'],
  [
    "crd.v1",
    '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"Group":5,"group":"g"}}',
  ],
  [
    "crd.v1beta1",
    '{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","spec":{"version":1,"versions":2}}',
  ],
  ["crd.v1", '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":null}'],
  ["v1alpha1.ClusterServiceVersion", '{"spec":{"version":"x"}}'],
  ["v1alpha1.ClusterServiceVersion", '{"spec":{"version":1}}'],
  ["v1alpha1.ClusterServiceVersion", '{"metadata":{"creationTimestamp":"yesterday"}}'],
  ["v1alpha1.ClusterServiceVersion", '{"spec":{"apiservicedefinitions":{"owned":[{"containerPort":1.5}]}}}'],
  ["v1alpha1.ClusterServiceVersion", '{"spec":{"webhookdefinitions":[{"rules":[{"apiGroups":"x"}]}]}}'],
  ["v1alpha1.ClusterServiceVersion", '{"kind":1}'],
];

const out = hand.map(([type, text, dup]) => (dup ? { type, text, dup } : { type, text }));
const PER_TYPE = { "v1alpha1.ClusterServiceVersion": 250, "registry.csvSpec": 200, "crd.v1": 150, "crd.v1beta1": 150 };
for (const [type, list] of Object.entries(bases)) {
  for (const b of list) out.push({ type, text: enc(b, false) });
  const n = PER_TYPE[type] ?? 120;
  for (let i = 0; i < n; i++) {
    const { v, dup } = mutate(pick(list), type);
    let text = enc(v, rnd() < 0.3);
    if (rnd() < 0.03) text = text.slice(0, Math.floor(rnd() * text.length));
    out.push(dup ? { type, text, dup } : { type, text });
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
