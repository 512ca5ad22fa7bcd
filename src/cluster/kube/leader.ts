/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: the
 * holder renews `renewTime` every `retryPeriod`; another candidate takes the Lease over only after
 * `leaseDuration` has passed since the last renewal it observed. Writes use the Lease's
 * resourceVersion, so two candidates can never both succeed. A leader that has not renewed within
 * `renewDeadline` (shorter than the lease's duration) stops leading before anyone else may take over,
 * whether its renewals fail or hang: two replicas never both act as leader.
 */
import { isConflict, isNotFound, type KubeClient, type KubeObject } from "./client.js";

export interface LeaderOptions {
  namespace: string;
  name: string;
  identity: string;
  /** Seconds a Lease is valid without renewal (default 15). */
  leaseDurationSeconds?: number;
  /** Milliseconds between attempts and renewals (default 2000). */
  retryPeriodMs?: number;
  /**
   * Milliseconds a leader keeps leading without a successful renewal (default 10000, client-go's;
   * must be shorter than the lease's duration).
   */
  renewDeadlineMs?: number;
  onStartedLeading?: () => void;
  onStoppedLeading?: () => void;
  onError?: (e: unknown) => void;
}

interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

function microTime(d = new Date()): string {
  return d.toISOString().replace("Z", "000Z");
}

export class LeaderElector {
  private stopped = false;
  private leading = false;
  private observedRenew = "";
  private observedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Fires when a leader has not renewed within renewDeadline. */
  private deadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: LeaderOptions,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.tick();
  }

  /** Stops; a leader releases the Lease (clears the holder) so another can take over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.deadline) clearTimeout(this.deadline);
    if (this.leading) {
      this.leading = false;
      try {
        const l = await this.client.get<Lease>("coordination.k8s.io/v1", "Lease", this.opts.name, this.opts.namespace);
        if (l.spec?.holderIdentity === this.opts.identity) {
          await this.client.replace({
            ...l,
            spec: { ...l.spec, holderIdentity: "", renewTime: microTime(new Date(0)) },
          });
        }
      } catch (e) {
        this.opts.onError?.(e);
      }
      this.opts.onStoppedLeading?.();
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const ok = await this.tryAcquireOrRenew();
      if (this.stopped) return;
      if (ok) this.renewed();
      if (ok && !this.leading) {
        this.leading = true;
        this.opts.onStartedLeading?.();
      } else if (!ok && this.leading) this.stopLeading();
    } catch (e) {
      this.opts.onError?.(e);
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.opts.retryPeriodMs ?? 2000);
  }

  /** A renewal succeeded: the leader may lead for another renewDeadline. */
  private renewed(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      if (!this.leading || this.stopped) return;
      this.opts.onError?.(
        new Error(`the Lease was not renewed for ${this.opts.renewDeadlineMs ?? 10_000} ms: no longer leading`),
      );
      this.stopLeading();
    }, this.opts.renewDeadlineMs ?? 10_000);
    this.deadline.unref();
  }

  private stopLeading(): void {
    this.leading = false;
    if (this.deadline) clearTimeout(this.deadline);
    this.opts.onStoppedLeading?.();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const duration = this.opts.leaseDurationSeconds ?? 15;
    const t = microTime();
    let lease: Lease | undefined;
    try {
      lease = await this.client.get<Lease>("coordination.k8s.io/v1", "Lease", this.opts.name, this.opts.namespace);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    if (!lease) {
      try {
        await this.client.create<Lease>({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.opts.name, namespace: this.opts.namespace },
          spec: {
            holderIdentity: this.opts.identity,
            leaseDurationSeconds: duration,
            acquireTime: t,
            renewTime: t,
            leaseTransitions: 0,
          },
        });
        return true;
      } catch (e) {
        if (isConflict(e) || (e as { status?: number }).status === 409) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    if (spec.renewTime !== this.observedRenew) {
      this.observedRenew = spec.renewTime ?? "";
      this.observedAt = Date.now();
    }
    const expired = holder === "" || Date.now() - this.observedAt > (spec.leaseDurationSeconds ?? duration) * 1000;
    if (holder !== this.opts.identity && !expired) return false;
    const next: Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: duration,
        renewTime: t,
        acquireTime: holder === this.opts.identity ? spec.acquireTime : t,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === this.opts.identity ? 0 : 1),
      },
    };
    try {
      const w = await this.client.replace(next);
      this.observedRenew = (w.spec as Lease["spec"])?.renewTime ?? t;
      this.observedAt = Date.now();
      return true;
    } catch (e) {
      if (isConflict(e)) return false;
      throw e;
    }
  }
}
