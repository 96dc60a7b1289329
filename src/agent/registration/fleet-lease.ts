// The claim of a push fleet on one WEC: ConfigMap kube-system/kubestellar-fleet in the WEC, data
// { fleetID, holderIdentity, renewTime (RFC 3339), leaseDurationSeconds }. A fleet takes the WEC
// when the ConfigMap is missing, already its own (same fleet ID: a restarted agent of the same
// fleet), or expired (renewTime + duration in the past); otherwise the WEC is refused. Writes carry
// the resourceVersion read, so two fleets racing for an expired lease cannot both win.
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';

export const FLEET_LEASE_NAMESPACE = 'kube-system';
export const FLEET_LEASE_NAME = 'kubestellar-fleet';
export const DEFAULT_FLEET_LEASE_SECONDS = 60;
const PATH = `/api/v1/namespaces/${FLEET_LEASE_NAMESPACE}/configmaps/${FLEET_LEASE_NAME}`;

export interface FleetLeaseData {
  fleetID: string;
  holderIdentity: string;
  renewTime: string;
  leaseDurationSeconds: string;
}

export type ClaimResult =
  | { held: true; tookOver: boolean }
  | { held: false; holder: FleetLeaseData; expiresAt: number };

interface ConfigMap { metadata?: { resourceVersion?: string; name?: string; namespace?: string }; data?: Record<string, string> }

export function expiresAt(d: Partial<FleetLeaseData>): number {
  const renewed = Date.parse(d.renewTime ?? '');
  const seconds = Number(d.leaseDurationSeconds);
  if (!Number.isFinite(renewed)) return 0;
  return renewed + (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_FLEET_LEASE_SECONDS) * 1000;
}

/** One claim or renewal; a lost race (409) is reported as refused until the next try reads the winner. */
export async function claimFleetLease(wec: Upstream, o: { fleetID: string; holderIdentity: string; durationSeconds?: number; now?: number }): Promise<ClaimResult> {
  const now = o.now ?? Date.now();
  const data: FleetLeaseData = {
    fleetID: o.fleetID, holderIdentity: o.holderIdentity,
    renewTime: new Date(now).toISOString(), leaseDurationSeconds: String(o.durationSeconds ?? DEFAULT_FLEET_LEASE_SECONDS),
  };
  const got = await upstreamRequest(wec, 'GET', PATH);
  if (got.status === 404) {
    const res = await upstreamRequest(wec, 'POST', `/api/v1/namespaces/${FLEET_LEASE_NAMESPACE}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: FLEET_LEASE_NAME, namespace: FLEET_LEASE_NAMESPACE }, data },
    });
    if (res.status === 409) return claimFleetLease(wec, { ...o, now });
    expectOk(res, `create configmap ${FLEET_LEASE_NAMESPACE}/${FLEET_LEASE_NAME}`);
    return { held: true, tookOver: false };
  }
  const cm = JSON.parse(expectOk(got, `get configmap ${FLEET_LEASE_NAMESPACE}/${FLEET_LEASE_NAME}`).body.toString('utf8')) as ConfigMap;
  const cur = (cm.data ?? {}) as Partial<FleetLeaseData>;
  const ours = cur.fleetID === o.fleetID;
  const expiry = expiresAt(cur);
  if (!ours && cur.fleetID && expiry > now) {
    return { held: false, holder: { fleetID: cur.fleetID, holderIdentity: cur.holderIdentity ?? '', renewTime: cur.renewTime ?? '', leaseDurationSeconds: cur.leaseDurationSeconds ?? '' }, expiresAt: expiry };
  }
  const res = await upstreamRequest(wec, 'PUT', PATH, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...cm.metadata, name: FLEET_LEASE_NAME, namespace: FLEET_LEASE_NAMESPACE }, data: { ...cm.data, ...data } },
  });
  if (res.status === 409) return claimFleetLease(wec, { ...o, now });
  expectOk(res, `renew configmap ${FLEET_LEASE_NAMESPACE}/${FLEET_LEASE_NAME}`);
  return { held: true, tookOver: !ours && !!cur.fleetID };
}
