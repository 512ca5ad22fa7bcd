import { writeFileSync } from "node:fs";
const pkg = (name, def = "stable") => ({ schema: "olm.package", name, defaultChannel: def });
const csvObj = (name, ann) =>
  Buffer.from(
    JSON.stringify({
      apiVersion: "operators.coreos.com/v1alpha1",
      kind: "ClusterServiceVersion",
      metadata: { name, annotations: ann ?? {} },
      spec: {},
    }),
  ).toString("base64");
const bundle = (name, p, version, extra = {}) => {
  const props = [
    { type: "olm.package", value: { packageName: p, version, ...(extra.release ? { release: extra.release } : {}) } },
  ];
  if (extra.subFor !== undefined)
    props.push({ type: "olm.bundle.object", value: { data: csvObj(name, { "olm.substitutesFor": extra.subFor }) } });
  return {
    schema: "olm.bundle",
    name,
    package: p,
    image: extra.image ?? `quay.io/org/${p}:${name.replace(/[+]/g, "_")}`,
    properties: props,
  };
};
const ch = (name, p, entries) => ({ schema: "olm.channel", name, package: p, entries });
const tmpl = (entries, substitutions, extra = "") =>
  JSON.stringify({ schema: "olm.template.substitutes", entries, substitutions }) + extra;
const base = [
  pkg("a"),
  ch("stable", "a", [
    { name: "a.v1.0.0" },
    { name: "a.v1.1.0", replaces: "a.v1.0.0" },
    { name: "a.v1.2.0", replaces: "a.v1.1.0", skips: ["a.v1.0.0"] },
  ]),
  bundle("a.v1.0.0", "a", "1.0.0"),
  bundle("a.v1.1.0", "a", "1.1.0"),
  bundle("a.v1.2.0", "a", "1.2.0"),
];
const subImg = "quay.io/org/a:v1.1.1";
const B = {
  [subImg]: bundle("a.v1.1.1", "a", "1.1.1", { image: subImg }),
  "quay.io/org/a:v1.0.1": bundle("a.v1.0.1", "a", "1.0.1", { image: "quay.io/org/a:v1.0.1" }),
  "quay.io/org/a:v0.9.0": bundle("a.v0.9.0", "a", "0.9.0", { image: "quay.io/org/a:v0.9.0" }),
  "quay.io/org/a:v1.1.0-r1": bundle("a-v1.1.0-1", "a", "1.1.0", { image: "quay.io/org/a:v1.1.0-r1", release: "1" }),
  "quay.io/org/a:legacy2": bundle("a.v1.1.0+2", "a", "1.1.0+2", {
    image: "quay.io/org/a:legacy2",
    subFor: "a.v1.1.0+1",
  }),
  "quay.io/org/a:legacy-nosub": bundle("a.v1.1.0+3", "a", "1.1.0+3", { image: "quay.io/org/a:legacy-nosub" }),
  "quay.io/org/b:v2": bundle("b.v2.0.0", "b", "2.0.0", { image: "quay.io/org/b:v2" }),
  "quay.io/org/a:nopkg": {
    schema: "olm.bundle",
    name: "a.nopkg",
    package: "a",
    image: "quay.io/org/a:nopkg",
    properties: [],
  },
  "quay.io/org/a:badver": bundle("a.bad", "a", "1.x", { image: "quay.io/org/a:badver" }),
  "quay.io/org/a:v1.2.0": bundle("a.v1.2.0", "a", "1.2.0", { image: "quay.io/org/a:v1.2.0" }),
  "quay.io/org/a:v1.2.0-next": bundle("a.v1.2.1", "a", "1.2.1", { image: "quay.io/org/a:v1.2.0-next" }),
};
const cases = [];
const add = (name, template) => cases.push({ name, template });
add("single substitution with replaces", tmpl(base, [{ name: subImg, base: "a.v1.1.0" }]));
add("no substitutions", tmpl(base, []));
add("substitutions null", tmpl(base, null));
add("substitution of a skipped entry", tmpl(base, [{ name: "quay.io/org/a:v1.0.1", base: "a.v1.0.0" }]));
add(
  "skips and skipRange move to the substitute",
  tmpl(
    [
      pkg("a"),
      ch("stable", "a", [
        { name: "a.v1.0.0" },
        { name: "a.v1.1.0", replaces: "a.v1.0.0", skips: ["a.v0.9.9"], skipRange: "<1.1.0" },
        { name: "a.v1.2.0", replaces: "a.v1.1.0" },
      ]),
      ...base.slice(2),
    ],
    [{ name: subImg, base: "a.v1.1.0" }],
  ),
);
add(
  "multiple channels",
  tmpl(
    [
      pkg("a"),
      base[1],
      ch("fast", "a", [{ name: "a.v1.1.0" }, { name: "a.v1.2.0", replaces: "a.v1.1.0" }]),
      ch("other", "a", [{ name: "a.v1.2.0" }]),
      ...base.slice(2),
    ],
    [{ name: subImg, base: "a.v1.1.0" }],
  ),
);
add(
  "two substitutions",
  tmpl(base, [
    { name: subImg, base: "a.v1.1.0" },
    { name: "quay.io/org/a:v1.0.1", base: "a.v1.0.0" },
  ]),
);
add("release is greater", tmpl(base, [{ name: "quay.io/org/a:v1.1.0-r1", base: "a.v1.1.0" }]));
add(
  "legacy build metadata with substitutesFor",
  tmpl(
    [
      pkg("a"),
      ch("stable", "a", [{ name: "a.v1.1.0+1" }, { name: "a.v1.2.0", replaces: "a.v1.1.0+1" }]),
      bundle("a.v1.1.0+1", "a", "1.1.0+1", { subFor: "a.v1.0.0" }),
      bundle("a.v1.2.0", "a", "1.2.0"),
    ],
    [{ name: "quay.io/org/a:legacy2", base: "a.v1.1.0+1" }],
  ),
);
add(
  "build metadata without substitutesFor is not ordered",
  tmpl(
    [
      pkg("a"),
      ch("stable", "a", [{ name: "a.v1.1.0+1" }, { name: "a.v1.2.0", replaces: "a.v1.1.0+1" }]),
      bundle("a.v1.1.0+1", "a", "1.1.0+1"),
      bundle("a.v1.2.0", "a", "1.2.0"),
    ],
    [{ name: "quay.io/org/a:legacy-nosub", base: "a.v1.1.0+1" }],
  ),
);
add("error: base not in catalog", tmpl(base, [{ name: subImg, base: "a.v9.9.9" }]));
add("error: empty name", tmpl(base, [{ name: "", base: "a.v1.1.0" }]));
add("error: empty base", tmpl(base, [{ name: subImg, base: "" }]));
add("error: same name and base", tmpl(base, [{ name: "a.v1.1.0", base: "a.v1.1.0" }]));
add(
  "error: duplicate base",
  tmpl(base, [
    { name: subImg, base: "a.v1.1.0" },
    { name: "quay.io/org/a:v1.0.1", base: "a.v1.1.0" },
  ]),
);
add(
  "error: same substitute for different bases",
  tmpl(base, [
    { name: subImg, base: "a.v1.1.0" },
    { name: subImg, base: "a.v1.0.0" },
  ]),
);
add("error: substitute not greater", tmpl(base, [{ name: "quay.io/org/a:v0.9.0", base: "a.v1.1.0" }]));
add("error: substitute equal", tmpl(base, [{ name: "quay.io/org/a:v1.2.0", base: "a.v1.2.0" }]));
add("error: render failure", tmpl(base, [{ name: "quay.io/org/a:missing", base: "a.v1.1.0" }]));
add("error: substitute without olm.package", tmpl(base, [{ name: "quay.io/org/a:nopkg", base: "a.v1.1.0" }]));
add("error: substitute with bad version", tmpl(base, [{ name: "quay.io/org/a:badver", base: "a.v1.1.0" }]));
add("error: substitute in another package", tmpl(base, [{ name: "quay.io/org/b:v2", base: "a.v1.1.0" }]));
add(
  "error: entries invalid (channel of unknown package)",
  tmpl([ch("stable", "zz", [{ name: "a.v1.0.0" }]), ...base], []),
);
add(
  "error: entries invalid (bundle without olm.package)",
  tmpl(
    [
      pkg("a"),
      ch("stable", "a", [{ name: "a.x" }]),
      { schema: "olm.bundle", name: "a.x", package: "a", image: "quay.io/x:1", properties: [] },
    ],
    [],
  ),
);
add("error: unknown schema", JSON.stringify({ schema: "olm.template.basic", entries: [] }));
add("error: missing schema", JSON.stringify({ entries: [] }));
add("error: invalid yaml", "schema: olm.template.substitutes\nentries: [\n");
add("error: entry without schema", tmpl([{ name: "x" }], []));
add(
  "error: substitutions wrong type",
  JSON.stringify({ schema: "olm.template.substitutes", entries: [], substitutions: "x" }),
);
add(
  "error: substitution field wrong type",
  JSON.stringify({ schema: "olm.template.substitutes", entries: [], substitutions: [{ name: 5, base: "x" }] }),
);
add("empty template", "schema: olm.template.substitutes\n");
add(
  "yaml template with case-insensitive keys",
  "Schema: olm.template.substitutes\nEntries:\n- schema: olm.package\n  name: a\n  defaultChannel: stable\n" +
    "- schema: olm.channel\n  package: a\n  name: stable\n  entries:\n  - name: a.v1.0.0\n  - name: a.v1.1.0\n" +
    "    replaces: a.v1.0.0\n- schema: olm.bundle\n  name: a.v1.0.0\n  package: a\n" +
    "  image: quay.io/org/a:a.v1.0.0\n  properties:\n  - type: olm.package\n" +
    "    value: {packageName: a, version: 1.0.0}\n- schema: olm.bundle\n  name: a.v1.1.0\n  package: a\n" +
    "  image: quay.io/org/a:a.v1.1.0\n  properties:\n  - type: olm.package\n" +
    "    value: {packageName: a, version: 1.1.0}\nSubstitutions:\n- Name: quay.io/org/a:v1.1.1\n  Base: a.v1.1.0\n",
);
add(
  "substitute of the channel head",
  tmpl(base, [{ name: "quay.io/org/a:v1.2.0-next", base: "a.v1.2.0" }]).replace("x", "x"),
);
writeFileSync(process.argv[2], JSON.stringify({ bundles: B, cases }, null, 1) + "\n");
