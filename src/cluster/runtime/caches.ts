/**
 * The caches of one controller process (after controller-runtime's manager cache): one informer per
 * apiVersion, kind, namespace and label selector, however many controllers read or watch that kind.
 * Each controller given the registry (`caches` in its spec) takes its informers from it, so that
 * one watch connection and one copy in memory serve them all; starting an informer twice is
 * starting it once (it resolves when its first list is cached).
 */
import type { KubeObject, WatchApi } from "../kube/client.js";
import { Informer, type InformerOptions } from "../kube/informer.js";

export type CacheOptions = Pick<InformerOptions, "namespace" | "labelSelector">;

export function cacheKey(apiVersion: string, kind: string, options: CacheOptions = {}): string {
  return `${apiVersion}/${kind}?ns=${options.namespace ?? ""}&l=${options.labelSelector ?? ""}`;
}

export class SharedCaches {
  readonly #informers = new Map<string, Informer>();

  constructor(
    private readonly client: WatchApi,
    private readonly log: (m: string) => void = () => {},
  ) {}

  /** The process's informer of a kind with these options (made on first use, not started). */
  informer<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: CacheOptions = {},
  ): Informer<T> {
    const key = cacheKey(apiVersion, kind, options);
    let inf = this.#informers.get(key);
    if (!inf) {
      const opts: InformerOptions = {
        ...(options.namespace ? { namespace: options.namespace } : {}),
        ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
        onError: (e) =>
          this.log(
            `watch ${kind}${options.labelSelector ? ` (${options.labelSelector})` : ""}: ${(e as Error).message}`,
          ),
      };
      inf = new Informer(this.client, apiVersion, kind, opts);
      this.#informers.set(key, inf);
    }
    return inf as unknown as Informer<T>;
  }

  /** The informers made so far, by key (for tests and metrics: one watch each). */
  get keys(): string[] {
    return [...this.#informers.keys()];
  }

  get size(): number {
    return this.#informers.size;
  }
}
