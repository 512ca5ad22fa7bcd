/**
 * What the invariant checkers (invariants.test.ts, invariants-deppy.test.ts) share: an identity's
 * rights as the API server states them, an action's outcome as a line of the log, and the seeded
 * run (steps numbered across seeds, the check after each, the seed and steps printed on failure so
 * a run can be replayed). No tests of its own.
 */
import assert from "node:assert/strict";
import type { KubeClient } from "../../src/cluster/kube/client.js";
import { prng } from "../shared.js";

/** A right: `namespace:verb:group:resource:names` (SelfSubjectRulesReview) or `probe:verb:resource:namespace`. */
export type Rights = Set<string>;

export interface Probe {
  verb: string;
  resource: string;
  namespace?: string;
  group?: string;
}

/** What `user` may do: SelfSubjectRulesReview rules in each namespace, and SelfSubjectAccessReview probes. */
export async function rightsOf(user: KubeClient, namespaces: readonly string[], probes: readonly Probe[]) {
  const out: Rights = new Set();
  for (const namespace of namespaces) {
    type Rule = { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] };
    const r = await user.request<{ status?: { resourceRules?: Rule[] } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
      { body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace } } },
    );
    for (const rule of r.status?.resourceRules ?? [])
      for (const v of rule.verbs)
        for (const g of rule.apiGroups ?? [""])
          for (const res of rule.resources ?? [])
            out.add(`${namespace}:${v}:${g}:${res}:${(rule.resourceNames ?? []).join(",")}`);
  }
  for (const p of probes) {
    const r = await user.request<{ status?: { allowed?: boolean } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: { resourceAttributes: { group: "", ...p } },
        },
      },
    );
    if (r.status?.allowed) out.add(`probe:${p.verb}:${p.resource}:${p.namespace ?? ""}`);
  }
  return out;
}

/** "done", or "refused: " and the start of the API server's message. */
export const attempt = (p: Promise<unknown>, width = 80): Promise<string> =>
  p.then(
    () => "done",
    (e: Error) => `refused: ${e.message.slice(0, width)}`,
  );

export interface Exploration {
  /** For messages: what to set to replay (e.g. `OPCAT_INVARIANT_SEED`), and the test file. */
  seedVar: string;
  stepsVar: string;
  file: string;
  seeds: readonly number[];
  steps: number;
}

/**
 * One seeded exploration: `run` gets a random source (re-seeded at each seed) and the number of the
 * step; `fail` ends the test with the step, the replay command and the log so far.
 */
export class Explorer {
  rnd: () => number;
  step = 0;
  readonly log: string[] = [];

  constructor(readonly x: Exploration) {
    this.rnd = prng(x.seeds[0]!);
  }

  pick = <T>(xs: readonly T[]): T => xs[Math.floor(this.rnd() * xs.length)]!;

  fail = (what: string): never => {
    const { seedVar, stepsVar, file, seeds, steps } = this.x;
    return assert.fail(
      `invariant broken after step ${this.step} (seeds ${seeds.join(",")}, ${steps} steps each): ${what}\n` +
        `replay: ${seedVar}=${seeds.join(",")} ${stepsVar}=${steps} node scripts/run-tests.mjs ${file}\n` +
        `steps:\n  ${this.log.join("\n  ")}`,
    );
  };

  /**
   * Checks, then for each seed takes `steps` actions drawn from `weighted`, each followed by `check`.
   * Step numbers go on across seeds, so the names a step makes never collide with an earlier seed's.
   */
  async explore(
    weighted: readonly string[],
    actions: Record<string, () => Promise<string>>,
    check: () => Promise<void>,
  ): Promise<void> {
    const { seeds, steps } = this.x;
    await check();
    for (const [k, seed] of seeds.entries()) {
      this.rnd = prng(seed);
      this.log.push(`seed ${seed}:`);
      for (this.step = k * steps + 1; this.step <= (k + 1) * steps; this.step++) {
        const action = this.pick(weighted);
        const line = await actions[action]!().catch((e: Error) => `failed: ${e.message.slice(0, 100)}`);
        this.log.push(`${this.step}. [${action}] ${line}`);
        await check();
      }
    }
  }
}

/**
 * Waits (bounded by `limitMs`) until `look` says nothing is busy and its signature (e.g. the
 * resourceVersions of the objects watched) has not changed for `quietMs`.
 */
export async function quiet(
  look: () => Promise<{ busy: boolean; signature: string }>,
  quietMs: number,
  limitMs: number,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  let last = "";
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const { busy, signature } = await look();
    if (signature !== last) {
      last = signature;
      stableSince = Date.now();
    }
    if (!busy && Date.now() - stableSince >= quietMs) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}
