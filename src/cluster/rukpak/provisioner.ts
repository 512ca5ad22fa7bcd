/**
 * Provisioners: what a Bundle's unpacked content becomes for an Instance. A provisioner has the id
 * ProvisionerClasses name (`spec.provisioner`), the content formats it accepts (a Bundle's
 * `status.format`, as the unpacker classified the tree: `content.ts`'s `inspect`) and `desired`, the
 * objects an Instance of such a Bundle installs. The registry holds them by id; the RukPak controller
 * (`controller.ts`) acts on the classes whose provisioner it runs and asks the registry which one
 * installs a Bundle ({@link ProvisionerRegistry.forContent}). The built-in ones are the plain
 * provisioner (`rukpak.io/plain`, manifests as they are: `plain.ts`) and the operator provisioner
 * (`operators.coreos.com/operators`, registry+v1 converted to plain objects: `registryv1.ts`).
 */
import type { KubeServer, KubeObject } from "../kube/client.js";
import type { Bundle, Instance } from "./api.js";

/** The objects an Instance installs, where the operator runs (registry+v1), and the content's format. */
export interface DesiredContent {
  objects: KubeObject[];
  installNamespace?: string;
  format: string;
}

/** What every provisioner is, including those that install something else than objects (resolvesets). */
export interface ProvisionerIdentity {
  /** The id ProvisionerClasses name in `spec.provisioner`. */
  readonly id: string;
  /** The content formats (`Bundle.status.format`) it accepts. */
  readonly formats: readonly string[];
}

/** What a provisioner reads the content with. */
export interface ProvisionerContext {
  client: KubeServer;
  /** The directory of the Bundle's unpacked content (in the content store, `content.ts`). */
  dir: string;
}

export interface Provisioner extends ProvisionerIdentity {
  /** The objects `instance` installs from `bundle`'s unpacked content (not yet labelled or owned). */
  desired(bundle: Bundle, instance: Instance, ctx: ProvisionerContext): Promise<DesiredContent>;
}

/** What the unpacker calls any tree that is not registry+v1 (`content.ts`'s `inspect`). */
export const DEFAULT_FORMAT = "plain";

/** Provisioners by id. */
export class ProvisionerRegistry {
  readonly #byId = new Map<string, Provisioner>();

  constructor(provisioners: Iterable<Provisioner> = []) {
    for (const p of provisioners) this.register(p);
  }

  register(p: Provisioner): this {
    if (this.#byId.has(p.id)) throw new Error(`provisioner ${p.id} is registered twice`);
    this.#byId.set(p.id, p);
    return this;
  }

  get(id: string): Provisioner | undefined {
    return this.#byId.get(id);
  }

  ids(): string[] {
    return [...this.#byId.keys()];
  }

  /**
   * The provisioner that installs content of `format` for a class naming provisioner `id`: that one when
   * it accepts the format, else the first registered one that does (a registry+v1 bundle of a plain
   * class is converted, plain manifests of an operator class are applied as they are), else the one
   * accepting {@link DEFAULT_FORMAT}.
   */
  forContent(id: string, format: string | undefined): Provisioner | undefined {
    const f = format ?? DEFAULT_FORMAT;
    const own = this.#byId.get(id);
    if (own?.formats.includes(f)) return own;
    const all = [...this.#byId.values()];
    return all.find((p) => p.formats.includes(f)) ?? all.find((p) => p.formats.includes(DEFAULT_FORMAT));
  }
}
