// Template expansion failures per (policy, destination cluster). KubeStellar: "any failure in any
// template expansion for a given Binding suppresses propagation of desired state from that
// Binding; the previously propagated desired state remains in place". Here a failing (policy,
// cluster) pair freezes, in that cluster, every work the policy sends there: works already there
// stay as they were, none is created or deleted for it, until no object of the policy fails there.
// Reconciling an object records its own failures; the pairs whose state flips are reported, so
// the caller reconciles the policy's other objects again.

export class ExpansionFailures {
  /** policy → cluster → object source key → message. */
  private readonly failures = new Map<string, Map<string, Map<string, string>>>();
  /** object source key → the pairs it fails in, `policy\0cluster`. */
  private readonly ofObject = new Map<string, Set<string>>();

  /**
   * Records one object's failures (policy → cluster → message); returns the policies with a pair
   * that became failing or clear.
   */
  record(source: string, now: ReadonlyMap<string, ReadonlyMap<string, string>>): Set<string> {
    const flipped = new Set<string>();
    const pairs = new Set<string>();
    for (const [policy, byCluster] of now) for (const cluster of byCluster.keys()) pairs.add(`${policy}\0${cluster}`);
    for (const pair of this.ofObject.get(source) ?? []) {
      if (pairs.has(pair)) continue;
      const [policy, cluster] = pair.split('\0') as [string, string];
      const objects = this.failures.get(policy)?.get(cluster);
      objects?.delete(source);
      if (objects?.size === 0) {
        this.failures.get(policy)!.delete(cluster);
        flipped.add(policy);
      }
    }
    for (const [policy, byCluster] of now) {
      for (const [cluster, message] of byCluster) {
        let clusters = this.failures.get(policy);
        if (!clusters) this.failures.set(policy, clusters = new Map());
        let objects = clusters.get(cluster);
        if (!objects) clusters.set(cluster, objects = new Map());
        if (objects.size === 0) flipped.add(policy);
        objects.set(source, message);
      }
    }
    if (pairs.size > 0) this.ofObject.set(source, pairs);
    else this.ofObject.delete(source);
    return flipped;
  }

  /** The policies failing in a cluster. */
  failingIn(cluster: string): string[] {
    const out: string[] = [];
    for (const [policy, clusters] of this.failures) if ((clusters.get(cluster)?.size ?? 0) > 0) out.push(policy);
    return out;
  }

  /** Whether some object of the policy fails to expand for the cluster. */
  failing(policy: string, cluster: string): boolean {
    return (this.failures.get(policy)?.get(cluster)?.size ?? 0) > 0;
  }
}
