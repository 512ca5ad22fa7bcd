/** Real data: the community v4.16 and v4.20 catalogs as two catalogs (v4.20 preferred), every package subscribed. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadCatalog } from "../../src/fbc/load.js";
import { validateCatalog } from "../../src/fbc/validate.js";
import { CatalogSet, dependenciesOf, resolve, type Entity } from "../../src/resolve/index.js";
import { COMMUNITY, requireShared } from "../shared.js";

const opts = requireShared(join(COMMUNITY, "catalogs", "v4.20"));

async function load(): Promise<CatalogSet> {
  const cats = [];
  for (const [name, dir, priority] of [
    ["v4.16", "v4.16", 1],
    ["v4.20", "v4.20", 2],
  ] as const) {
    const r = await loadCatalog(join(COMMUNITY, "catalogs", dir));
    const v = validateCatalog(r.config);
    assert.equal(r.problems.length + v.problems.length, 0);
    cats.push({ name, priority, model: v.model });
  }
  return new CatalogSet(cats);
}

test(
  "subscribing to every package chooses the default channel's " +
    "head of the preferred catalog, with a closed dependency set",
  opts,
  async () => {
    const set = await load();
    const pkgs = [...new Set(set.entities.map((e) => e.package))].sort();
    assert.ok(pkgs.length >= 40);
    const inputs = pkgs.map((p) => ({
      name: p,
      inputClass: "subscription",
      constraints: [{ type: "olm.catalog", value: { package: p } }],
    }));
    const rs = resolve({ catalogs: set, inputs });
    const selected = new Map<string, Entity>();
    for (const b of rs.bundles) selected.set(b.name, set.byName(b.name).find((e) => e.catalog === b.catalog) as Entity);
    let resolved = 0;
    for (const st of rs.inputs) {
      const pkg = st.name;
      const preferred = set.catalogs.find((c) => set.byPackage(pkg).some((e) => e.catalog === c.name))?.name as string;
      const head = set.channel(preferred, pkg, set.defaultChannel(preferred, pkg))?.[0];
      if (st.conditions.length > 0) {
        // Only unsatisfiable dependencies may block a package; the explanation names them.
        assert.equal(st.conditions[0].reason, "ConstraintsNotSatisfiable", pkg);
        assert.match(
          st.conditions[0].message,
          /requires an operator providing an API with group: .*, but no bundle in the catalogs satisfies it/,
        );
        assert.ok(head && dependenciesOf(head).length > 0, pkg);
        continue;
      }
      resolved++;
      assert.equal(st.instances[0].name, head?.name, `${pkg}: expected the head of ${preferred}`);
      assert.equal(st.instances[0].catalog, preferred);
    }
    assert.ok(resolved >= pkgs.length - 3, `${resolved}/${pkgs.length} resolved`);
    // Dependency closure: every dependency of every chosen bundle is met inside the resolveset.
    for (const e of selected.values()) {
      for (const d of dependenciesOf(e))
        assert.ok(
          [...selected.values()].some((x) => d.test(x)),
          `${e.name}: ${d.text}`,
        );
    }
    const perPackage = new Map<string, number>();
    for (const b of rs.bundles) perPackage.set(b.package, (perPackage.get(b.package) ?? 0) + 1);
    for (const [p, n] of perPackage) assert.equal(n, 1, p);
  },
);
