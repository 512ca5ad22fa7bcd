// Builds the CSV inputs for the golden vectors: [name, csvText] pairs.
const j = (o) => JSON.stringify(o);
const csv = (spec, extra = {}) =>
  j({
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: "x.v1.0.0" },
    spec,
    ...extra,
  });
const cases = [];
const add = (name, text) => cases.push({ name, csv: text });

add(
  "migrations_test fooRawCsv",
  `{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": ` +
    `"foo.v0.1.0"}, "spec": {"displayName": "Foo Operator", "customresourcedefinitions": {"owned": ` +
    `[{"group": "test.foo", "version": "v1", "kind": "Foo", "name": "foos.test.foo"}]}, "version": ` +
    `"0.1.0", "relatedImages": [{"name": "operator", "image": "test.registry/foo-operator/foo:v0.1.0"}]}}`,
);
add("empty object", `{}`);
add(
  "all fields",
  j({
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: {
      name: "all.v1.0.0",
      annotations: { "olm.skipRange": "<1.0.0 & >0.1", b: "2", a: "1", é: "x", Z: "" },
      labels: { "operatorframework.io/arch.amd64": "supported", x: "y" },
    },
    spec: {
      version: "1.0.0",
      displayName: "All <Fields> & more",
      description: 'line1\nline2\u2028\u2029 "q" \\ \u0000 \u007f é 😀',
      maturity: "alpha",
      minKubeVersion: "1.20.0",
      keywords: ["a", null, "", "<b>"],
      links: [{ name: "Docs", url: "https://x/?a=1&b=2" }, {}, { url: "u" }],
      maintainers: [{ name: "m", email: "m@x" }, { email: "e" }, {}],
      provider: { name: "Prov" },
      installModes: [{ type: "OwnNamespace", supported: true }, { type: "AllNamespaces", supported: false }, {}],
      nativeAPIs: [{ group: "", version: "v1", kind: "Pod" }, {}],
      customresourcedefinitions: {
        owned: [
          {
            name: "foos.x.io",
            version: "v1",
            kind: "Foo",
            displayName: "Foo",
            description: "d",
            resources: [{ name: "", kind: "Deployment", version: "v1" }, {}],
            specDescriptors: [
              {
                path: "size",
                displayName: "Size",
                description: "the size",
                "x-descriptors": ["urn:alm:descriptor:com.tectonic.ui:podCount"],
                value: 3,
              },
              { path: "p" },
            ],
            statusDescriptors: [
              { path: "s", value: { z: 1, a: [1, "<"] } },
              { path: "n", value: null },
              { path: "e", "x-descriptors": [] },
            ],
            actionDescriptors: [{ path: "a", value: "str<>&" }],
          },
        ],
        required: [{ name: "bars.x.io", version: "v1alpha1", kind: "Bar" }],
      },
      apiservicedefinitions: {
        owned: [
          {
            name: "v1.y.io",
            group: "y.io",
            version: "v1",
            kind: "Y",
            deploymentName: "dep",
            containerPort: 5443,
            displayName: "Y",
            description: "yd",
            resources: [{ name: "r", kind: "K", version: "v1" }],
            specDescriptors: [{ path: "q", value: false }],
          },
          { containerPort: 0 },
          { containerPort: -1 },
        ],
        required: [{ name: "v1.z.io", group: "z.io", version: "v1", kind: "Z" }],
      },
      install: {
        strategy: "deployment",
        spec: {
          deployments: [
            {
              name: "d",
              spec: {
                replicas: 1,
                selector: { matchLabels: { a: "b" } },
                template: {
                  metadata: { labels: { a: "b" } },
                  spec: { containers: [{ name: "c", image: "i", resources: { limits: { cpu: "100m" } } }] },
                },
                strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: 1 } },
              },
            },
          ],
          permissions: [
            { serviceAccountName: "sa", rules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }] },
          ],
        },
      },
      webhookdefinitions: [
        {
          generateName: "w",
          type: "ValidatingAdmissionWebhook",
          containerPort: 443,
          targetPort: 4343,
          rules: [{ operations: ["CREATE"], apiGroups: ["x"], apiVersions: ["v1"], resources: ["foos"], scope: "*" }],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          webhookPath: "/v",
        },
      ],
      icon: [{ base64data: "AAAA", mediatype: "image/png" }],
      replaces: "all.v0.9.0",
      skips: ["a"],
      relatedImages: [{ name: "n", image: "i" }],
      labels: { l: "v" },
      annotations: { a: "v" },
      selector: { matchExpressions: [{ key: "k", operator: "In", values: ["v"] }] },
      cleanup: { enabled: true },
    },
    status: {
      phase: "Succeeded",
      lastUpdateTime: "2020-01-01T00:00:00Z",
      conditions: [{ phase: "Pending", lastTransitionTime: null }],
      requirementStatus: [{ group: "g", dependents: [{ status: "x" }] }],
      cleanup: { pendingDeletion: [{ instances: [{ name: "n" }] }] },
    },
  }),
);
add(
  "raw value whitespace and escapes kept",
  `{"spec":{"customresourcedefinitions":{"owned":[{"name":"a","specDescriptors":[{"path":"p","value": ` +
    `{ "b" : "\\u003c\\u00e9" ,  "a" : [ 1 , 2.50 , -0 , 1E3 ] } }]}]}}}`,
);
add(
  "case-insensitive keys",
  `{"SPEC":{"DisplayName":"D","customResourceDefinitions":{"OWNED":[{"NAME":"n","Version":` +
    `"v1","KIND":"K","X-Descriptors":["nope"],"SpecDescriptors":[{"PATH":"p","X-DESCRIPTORS":` +
    `["x"],"VALUE":1}]}]},"Provider":{"URL":"u"}},"METADATA":{"Annotations":{"A":"b"}}}`,
);
add(
  "long s and kelvin fold",
  `{"\u017fpec":{"displayName":"LongS","installModes":[{"type":"T",` +
    `"\u017fupported":true}]},"metadata":{"labels":{"\u212a":"kelvin"}}}`,
);
add("exact name wins over folded", `{"spec":{"displayName":"exact","DISPLAYNAME":"folded"}}`);
add(
  "duplicate keys: last wins, maps merge",
  `{"metadata":{"annotations":{"a":"1","b":"2"},"annotations":{"b":"3","c":"4"}},"spec":` +
    `{"displayName":"one","displayName":"two","keywords":["a","b","c"],"keywords":["x"]}}`,
);
add(
  "duplicate slices decode into old elements",
  `{"spec":{"installModes":[{"type":"A","supported":true},{"type":"B","supported":` +
    `true}],"installModes":[{"type":"C"}],"installModes":[{"type":"D"},{}]}}`,
);
add(
  "duplicate slices: empty array drops capacity",
  `{"spec":{"installModes":[{"type":"A","supported":true},{"type":"B",` +
    `"supported":true}],"installModes":[],"installModes":[{"type":"D"},{}]}}`,
);
add(
  "duplicate struct merges",
  `{"spec":{"provider":{"name":"n"},"provider":{"url":"u"},"customresourcedefinitions":` +
    `{"owned":[{"name":"x"}]},"customresourcedefinitions":{"required":[{"name":"y"}]}}}`,
);
add("null slice element reused", `{"spec":{"maintainers":[{"name":"a"},{"name":"b"}],"maintainers":[null,null,null]}}`);
add(
  "nulls everywhere",
  `{"metadata":null,"spec":{"displayName":null,"keywords":null,"provider":null,"installModes":[null],` +
    `"nativeAPIs":null,"customresourcedefinitions":{"owned":null},"apiservicedefinitions":null},"status":null}`,
);
add("null map value", `{"metadata":{"annotations":{"a":null,"b":"x"},"labels":{}}}`);
add(
  "empty arrays omitted",
  `{"spec":{"keywords":[],"links":[],"installModes":[],"customresourcedefinitions":{"owned":[],"required":[]}}}`,
);
add(
  "unknown fields ignored",
  `{"unknown":{"deep":[1,{"x":"}"}]},"spec":{"foo":"bar","displayName":"x","install":{"strategy":` +
    `"deployment","spec":{"deployments":[{"name":"d","x":{"containers":"not checked"}}]}}}}`,
);
add("version tolerant", csv({ version: "v1.2" }));
add("version with spaces", csv({ version: " 1.2.3 " }));
add("version number", csv({ version: 1 }));
add("version null", csv({ version: null }));
add("version object", csv({ version: {} }));
add("version invalid", csv({ version: "1.2.3-" }));
add("version invalid prerelease", csv({ version: "1.0.0-01" }));
add("version short with prerelease", csv({ version: "1.2-alpha" }));
add("release ok", csv({ release: "1.alpha-2" }));
add("release empty", csv({ release: "" }));
add("release leading zero", csv({ release: "01" }));
add("release bad char", csv({ release: "a_b" }));
add("release null", csv({ release: null }));
add("kind number (embedded TypeMeta)", `{"kind":5,"spec":{"displayName":"x"}}`);
add("metadata string", `{"metadata":"x"}`);
add("spec array", `{"spec":[]}`);
add("annotations value number", `{"metadata":{"annotations":{"a":1}}}`);
add("annotations array", `{"metadata":{"annotations":["a"]}}`);
add("keywords string", csv({ keywords: "abc" }));
add("keywords element number", csv({ keywords: ["a", 1] }));
add("keywords element object", csv({ keywords: [{}] }));
add("installMode supported string", csv({ installModes: [{ type: "A", supported: "yes" }] }));
add("installMode type bool", csv({ installModes: [{ type: true, supported: true }] }));
add("containerPort string", csv({ apiservicedefinitions: { owned: [{ containerPort: "80" }] } }));
add("containerPort float", csv({ apiservicedefinitions: { owned: [{ containerPort: 1.5 }] } }));
add("containerPort exponent", `{"spec":{"apiservicedefinitions":{"owned":[{"containerPort":1e3}]}}}`);
add("containerPort overflow", `{"spec":{"apiservicedefinitions":{"owned":[{"containerPort":2147483648}]}}}`);
add("containerPort int32 min", `{"spec":{"apiservicedefinitions":{"owned":[{"containerPort":-2147483648}]}}}`);
add("containerPort -0", `{"spec":{"apiservicedefinitions":{"owned":[{"containerPort":-0}]}}}`);
add("generation float", `{"metadata":{"generation":1.5}}`);
add("generation huge", `{"metadata":{"generation":9223372036854775808}}`);
add("generation string", `{"metadata":{"generation":"1"}}`);
add("first type error wins", `{"spec":{"displayName":1,"maturity":2}}`);
add("abort wins over saved type error", `{"spec":{"displayName":1,"version":"x"}}`);
add("type error after abort never seen", `{"spec":{"version":"x","displayName":1}}`);
add(
  "podspec not object",
  csv({
    install: { strategy: "deployment", spec: { deployments: [{ name: "d", spec: { template: { spec: "x" } } }] } },
  }),
);
add(
  "podspec unchecked inside",
  csv({
    install: {
      strategy: "deployment",
      spec: { deployments: [{ name: "d", spec: { template: { spec: { containers: 5 } } } }] },
    },
  }),
);
add(
  "replicas string",
  csv({ install: { strategy: "deployment", spec: { deployments: [{ name: "d", spec: { replicas: "1" } }] } } }),
);
add(
  "maxSurge bool",
  csv({ install: { spec: { deployments: [{ spec: { strategy: { rollingUpdate: { maxSurge: true } } } }] } } }),
);
add(
  "maxSurge float",
  csv({ install: { spec: { deployments: [{ spec: { strategy: { rollingUpdate: { maxSurge: 1.5 } } } }] } } }),
);
add(
  "maxSurge null",
  csv({ install: { spec: { deployments: [{ spec: { strategy: { rollingUpdate: { maxSurge: null } } } }] } } }),
);
add("deployment label number", csv({ install: { spec: { deployments: [{ label: { a: 1 } }] } } }));
add("permissions rules verbs number", csv({ install: { spec: { permissions: [{ rules: [{ verbs: [1] }] }] } } }));
add("webhook rule apiGroups (embedded Rule)", csv({ webhookdefinitions: [{ rules: [{ apiGroups: 5 }] }] }));
add("webhook targetPort string", csv({ webhookdefinitions: [{ targetPort: "https" }] }));
add("webhook targetPort object", csv({ webhookdefinitions: [{ targetPort: {} }] }));
add("webhook timeoutSeconds float", csv({ webhookdefinitions: [{ timeoutSeconds: 1.5 }] }));
add("cleanup enabled string", csv({ cleanup: { enabled: "true" } }));
add("selector matchLabels number", csv({ selector: { matchLabels: { a: 1 } } }));
add("icon string", csv({ icon: "x" }));
add("relatedImages element string", csv({ relatedImages: ["x"] }));
add("status phase number", `{"status":{"phase":1}}`);
add("status condition time bad", `{"status":{"conditions":[{"lastUpdateTime":"yesterday"}]}}`);
add("status requirement dependents bad", `{"status":{"requirementStatus":[{"dependents":[{"group":1}]}]}}`);
add("ownerReferences controller string", `{"metadata":{"ownerReferences":[{"controller":"yes"}]}}`);
add("managedFields fieldsV1 anything", `{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}},"time":null}]}}`);
add("managedFields time bad", `{"metadata":{"managedFields":[{"time":"x"}]}}`);
const times = [
  "2020-01-01T00:00:00Z",
  "2020-01-01T00:00:00.123456789Z",
  "2020-01-01T00:00:00,5Z",
  "2020-01-01T00:00:00.1234567891234+01:00",
  "2020-01-01T1:00:00Z",
  "2020-02-29T00:00:00Z",
  "2000-02-29T00:00:00Z",
  "",
  "x",
  "2020",
  "20201-01-01T00:00:00Z",
  "202a-01-01T00:00:00Z",
  "2020/01/01T00:00:00Z",
  "2020-1-01T00:00:00Z",
  "2020-13-01T00:00:00Z",
  "2020-00-01T00:00:00Z",
  "2020-01-32T00:00:00Z",
  "2021-02-29T00:00:00Z",
  "1900-02-29T00:00:00Z",
  "2020-01-00T00:00:00Z",
  "2020-01-01 00:00:00Z",
  "2020-01-01t00:00:00Z",
  "2020-01-01T24:00:00Z",
  "2020-01-01Tx:00:00Z",
  "2020-01-01T00:60:00Z",
  "2020-01-01T00:0:00Z",
  "2020-01-01T00:00:60Z",
  "2020-01-01T00:00:00",
  "2020-01-01T00:00:00+0100",
  "2020-01-01T00:00:00+01:00x",
  "2020-01-01T00:00:00Zjunk",
  "2020-01-01T00:00:00+25:00",
  "2020-01-01T00:00:00+24:61",
  "2020-01-01T00:00:00*01:00",
  "2020-01-01T00:00:00+0a:00",
  "2020-01-01T00:00:00z",
  "2020-01-01T00:00:00.Z",
  "2020-01-01T00:00:00é",
  "é2020",
  '2020-01-01T00:00:00"Z',
  "\u00002020",
];
for (const t of times) add(`creationTimestamp ${JSON.stringify(t)}`, j({ metadata: { creationTimestamp: t } }));
add("creationTimestamp number", `{"metadata":{"creationTimestamp":5}}`);
add("creationTimestamp null", `{"metadata":{"creationTimestamp":null}}`);
add("deletionTimestamp bad", `{"metadata":{"deletionTimestamp":"2020-13-01T00:00:00Z"}}`);
add("syntax: missing value", `{"a":}`);
add("syntax: trailing text", `{"a":1} x`);
add("syntax: truncated", `{"a":1`);
add("syntax: bad literal", `{"spec":{"displayName":tru}}`);
add("whitespace around", ` \n {"spec" : { "displayName" : "ws" } } \n`);
add(
  "string escapes in keys and values",
  `{"metadata":{"annotations":{"k\\u0065y":` +
    `"v\\/\\b\\f\\n\\r\\t\\u0001\\ud83d\\ude00\\ud800"}},"spec":{"display\\u004eame":"esc"}}`,
);
console.log(JSON.stringify(cases));
