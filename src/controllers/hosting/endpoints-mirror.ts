// Hosted registration's routing (`ksview serve --register-endpoints-from NAMESPACE/SERVICE`): the
// server's pods run in a hosting cluster, the WDS is another cluster, and the WDS's aggregator
// (with --enable-aggregator-routing=true) dials the endpoints of the selectorless Service
// `<namespace>/<service>` registered in the WDS. This controller, run by the leader only, keeps
// those endpoints equal to the endpoints of Service NAMESPACE/SERVICE in the hosting cluster, which
// the hosting cluster's EndpointSlice controller computes from its pods' readiness.
//
// What the WDS reads decides what is written (kube-aggregator's endpoint service resolver):
// - up to v1.33 it reads v1 Endpoints, and only `subsets[].addresses` (the ready ones) of the port
//   named as the Service's port (k8s.io/apiserver/pkg/util/proxy.ResolveEndpoint);
// - from v1.34 it reads EndpointSlices labelled kubernetes.io/service-name, endpoints whose
//   `ready` is true or unset.
// So both are written, as kube-apiserver's own endpoint reconciler writes both for the `kubernetes`
// Service (pkg/controlplane/reconcilers/endpointsadapter.go): the Endpoints labelled
// endpointslice.kubernetes.io/skip-mirror (the WDS's endpointslicemirroring controller, when it
// runs, must not make a second slice of them), one EndpointSlice per address family, managed-by
// ours, both families always (an empty one says "none"). Only the slices of the hosting cluster's
// EndpointSlice controller are read: labelled managed-by it, and owned by the Service as that
// controller owns them (a controller owner reference naming the Service's current uid; a label
// anyone who may write slices in the namespace can set, that reference only with the Service's
// uid, and the garbage collector deletes a slice whose owner's uid is not the live one's), at most
// MAX_ADDRESSES per family. Endpoints: ready addresses in `addresses`, not-ready ones that are not terminating in
// `notReadyAddresses`, terminating ones left out (the endpoints controller's rule). Slices: the
// conditions as the hosting cluster says them. Node names and targetRefs name the hosting
// cluster's objects and are not copied.
//
// Contract: setLeading(true) starts a watch (../../kube/informer.ts) of the hosting slices and of the Service
// (by name) and writes after both are listed and after every change (coalesced); setLeading(false) stops the watch and no write
// starts afterwards. A write equal to the last one written in this term is skipped (idempotent);
// a failed write is retried with backoff (1 s doubling to 30 s) for as long as it leads.
import { Informer } from '../../kube/informer.js';
import type { KubeObject } from '../../kube/objects.js';
import { serverSideApply, type Upstream } from '../../kube/upstream.js';

/** The value of endpointslice.kubernetes.io/managed-by on the slices written here. */
export const MIRROR_MANAGER = 'endpoints-mirror.view.kubestellar.io';
const SOURCE_MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
/** The hosting cluster's EndpointSlice controller: the only source mirrored. */
export const SOURCE_MANAGER = 'endpointslice-controller.k8s.io';
/** At most this many addresses per family, as an EndpointSlice holds (the API refuses more). */
export const MAX_ADDRESSES = 1000;
const FIELD_MANAGER = 'ksview-serve-endpoints';

export interface SourceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
}

export interface SourceSlice extends KubeObject {
  metadata?: KubeObject['metadata'] & { ownerReferences?: Array<{ apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean }> };
  addressType?: string;
  endpoints?: SourceEndpoint[] | null;
  ports?: Array<{ name?: string; port?: number; protocol?: string }> | null;
}

export interface MirrorTarget {
  /** The selectorless Service in the WDS. */
  namespace: string;
  service: string;
  /** Name of its port, which the aggregator matches (the Service's `ports[0].name`). */
  portName: string;
}

export interface MirrorWrite {
  path: string;
  object: Record<string, unknown>;
}

interface Address { ip: string; ready: boolean; serving: boolean; terminating: boolean }

const FAMILIES = ['IPv4', 'IPv6'] as const;

/** The slice name for one address family. */
export const sliceName = (service: string, family: string) => `${service}-${family.toLowerCase()}`;

/**
 * The port of a hosting slice that leads to this server: the one numbered `serverPort` (the
 * Service's targetPort is the container's port), else the slice's only port.
 */
function portOf(slice: SourceSlice, serverPort: number): { port: number; protocol: string } | undefined {
  const ports = (slice.ports ?? []).filter((p) => typeof p.port === 'number');
  const p = ports.find((x) => x.port === serverPort) ?? (ports.length === 1 ? ports[0] : undefined);
  return p ? { port: p.port!, protocol: p.protocol ?? 'TCP' } : undefined;
}

/**
 * Whether the slice is the hosting EndpointSlice controller's for the Service of uid `serviceUid`
 * (undefined: there is no such Service): its managed-by label, and the controller owner reference
 * that controller sets (pkg/controller/endpointslice: metav1.NewControllerRef(service)).
 */
export function isControllerSlice(s: SourceSlice, serviceUid: string | undefined): boolean {
  if (s.metadata?.labels?.[SOURCE_MANAGED_BY_LABEL] !== SOURCE_MANAGER || !serviceUid) return false;
  const owner = s.metadata.ownerReferences?.find((r) => r.controller === true);
  return owner?.apiVersion === 'v1' && owner.kind === 'Service' && owner.uid === serviceUid;
}

/**
 * What the WDS must hold for the hosting slices given (the Endpoints and one EndpointSlice per
 * family) when the hosting Service's uid is `serviceUid`: a pure function, so every write is
 * decided here and tested without a cluster.
 */
export function mirroredObjects(slices: readonly SourceSlice[], target: MirrorTarget, serverPort: number, serviceUid: string | undefined): MirrorWrite[] {
  const byFamily = new Map<string, Map<string, Address>>(FAMILIES.map((f) => [f, new Map()]));
  let port: { port: number; protocol: string } | undefined;
  for (const s of slices) {
    const family = s.addressType;
    if (family !== 'IPv4' && family !== 'IPv6') continue; // FQDN slices: nothing the aggregator dials
    // Only what the hosting cluster's own controller computed from the pods' readiness: a slice
    // someone wrote by hand with the service-name label would otherwise steer the WDS's aggregator.
    if (!isControllerSlice(s, serviceUid)) continue;
    const p = portOf(s, serverPort);
    if (!p) continue;
    port ??= p;
    if (p.port !== port.port) continue; // one port per Service port; a slice disagreeing is a transient of a rollout
    for (const e of s.endpoints ?? []) {
      const ip = e.addresses?.[0];
      if (!ip) continue;
      const c = e.conditions ?? {};
      // The EndpointSlice API: an unset `ready` is read as ready, unset `serving` as ready's value.
      const ready = c.ready !== false;
      const addr = { ip, ready, serving: c.serving ?? ready, terminating: c.terminating === true };
      const seen = byFamily.get(family)!.get(ip);
      if (!seen && byFamily.get(family)!.size >= MAX_ADDRESSES) continue; // the API's bound of a slice
      // An address listed twice (two slices during a resync): the readier reading wins.
      if (!seen || (addr.ready && !seen.ready)) byFamily.get(family)!.set(ip, addr);
    }
  }
  const all = FAMILIES.flatMap((f) => [...byFamily.get(f)!.values()]).sort((a, b) => a.ip.localeCompare(b.ip));
  const ready = all.filter((a) => a.ready).map((a) => ({ ip: a.ip }));
  const notReady = all.filter((a) => !a.ready && !a.terminating).map((a) => ({ ip: a.ip }));
  const ports = port ? [{ name: target.portName, port: port.port, protocol: port.protocol }] : [];
  const ns = target.namespace;
  const writes: MirrorWrite[] = [{
    path: `/api/v1/namespaces/${ns}/endpoints/${target.service}`,
    object: {
      apiVersion: 'v1', kind: 'Endpoints',
      metadata: { name: target.service, namespace: ns, labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: port && (ready.length || notReady.length)
        ? [{ ...(ready.length ? { addresses: ready } : {}), ...(notReady.length ? { notReadyAddresses: notReady } : {}), ports }]
        : [],
    },
  }];
  for (const family of FAMILIES) {
    const addrs = [...byFamily.get(family)!.values()].sort((a, b) => a.ip.localeCompare(b.ip));
    // Both families always, an empty slice saying "none": a slice of a family the hosting cluster
    // stopped having must not keep its addresses in the WDS.
    const name = sliceName(target.service, family);
    writes.push({
      path: `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${name}`,
      object: {
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
        metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': target.service, 'endpointslice.kubernetes.io/managed-by': MIRROR_MANAGER } },
        addressType: family,
        endpoints: addrs.map((a) => ({ addresses: [a.ip], conditions: { ready: a.ready, serving: a.serving, terminating: a.terminating } })),
        ports,
      },
    });
  }
  return writes;
}

export interface EndpointsMirrorOptions {
  /** The cluster the server's pods run in (in-cluster config), and the Service there whose endpoints are mirrored. */
  hosting: Upstream;
  source: { namespace: string; service: string };
  /** The WDS and its selectorless Service. */
  wds: Upstream;
  target: MirrorTarget;
  /** The server's own port, which the hosting Service targets. */
  serverPort: number;
  log: (msg: string) => void;
  /** How the WDS is written (default: server-side apply); tests record instead. */
  write?: (w: MirrorWrite) => Promise<void>;
  /** The watch of the hosting slices and Service (default: Informers); tests give a fake. */
  watch?: (onChange: () => void) => SliceWatch;
}

/** What the mirror reads of the hosting cluster: its slices of the Service, and the Service's uid. */
export interface SliceWatch {
  start(): void;
  stop(): void;
  list(): SourceSlice[];
  /** The Service's uid; undefined when there is no such Service. */
  serviceUid(): string | undefined;
  /** Both listed. */
  readonly hasSynced: boolean;
}

export class EndpointsMirror {
  private watch: SliceWatch | undefined;
  private term = 0;
  private readonly lastWritten = new Map<string, string>();
  private scheduled = false;
  private running: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private backoff = 1000;
  private readonly write: (w: MirrorWrite) => Promise<void>;

  constructor(private readonly mirror: EndpointsMirrorOptions) {
    this.write = mirror.write ?? (async (w) => { await serverSideApply(mirror.wds, w.path, w.object, FIELD_MANAGER); });
  }

  get leading(): boolean {
    return this.watch !== undefined;
  }

  setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    if (!leading) {
      this.watch!.stop();
      this.watch = undefined;
      this.term++;
      clearTimeout(this.retry);
      this.retry = undefined;
      this.lastWritten.clear();
      return;
    }
    this.backoff = 1000;
    this.watch = (this.mirror.watch ?? this.informer)(() => this.schedule());
    this.watch.start();
  }

  stop(): void {
    this.setLeading(false);
  }

  /** Resolves once no sync runs (tests). */
  async idle(): Promise<void> {
    while (this.running || this.scheduled) await (this.running ?? Promise.resolve());
  }

  private readonly informer = (onChange: () => void): SliceWatch => {
    const { namespace, service } = this.mirror.source;
    const onError = (what: string) => (err: Error) => this.mirror.log(`endpoints mirror: hosting ${what} of ${namespace}/${service}: ${err.message.split('\n')[0]}`);
    const inf = new Informer<SourceSlice>(this.mirror.hosting, {
      path: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
      labelSelector: `kubernetes.io/service-name=${service}`,
      onChange, onRelisted: onChange, onError: onError('EndpointSlices'),
    });
    // The Service by name (its uid only), which RBAC can grant by name.
    const svc = new Informer<KubeObject>(this.mirror.hosting, {
      path: `/api/v1/namespaces/${namespace}/services`, fieldSelector: `metadata.name=${service}`, metadataOnly: true,
      onChange, onRelisted: onChange, onError: onError('Service'),
    });
    // The first list's events and onRelisted come before hasSynced is set: the first sync follows `synced`.
    return {
      start: () => { inf.start(); svc.start(); void Promise.all([inf.synced, svc.synced]).then(onChange); },
      stop: () => { inf.stop(); svc.stop(); },
      list: () => inf.list(),
      serviceUid: () => svc.list().find((x) => x.metadata?.name === service)?.metadata?.uid,
      get hasSynced() { return inf.hasSynced && svc.hasSynced; },
    };
  };

  /** Coalesces changes: one sync at a time, one more after it if anything changed meanwhile. */
  private schedule(): void {
    if (!this.watch?.hasSynced) return;
    this.scheduled = true;
    if (this.running) return;
    this.running = this.loop().finally(() => { this.running = undefined; });
  }

  private async loop(): Promise<void> {
    while (this.scheduled) {
      this.scheduled = false;
      await Promise.resolve(); // let a burst of events land first
      const term = this.term;
      if (!this.watch) return;
      try {
        await this.sync(term);
        this.backoff = 1000;
      } catch (err) {
        if (term !== this.term) return;
        this.mirror.log(`endpoints mirror: writing ${this.mirror.target.namespace}/${this.mirror.target.service} in the WDS: ${(err as Error).message.split('\n')[0]} (retrying)`);
        clearTimeout(this.retry);
        this.retry = setTimeout(() => { this.retry = undefined; this.schedule(); }, this.backoff);
        this.retry.unref?.();
        this.backoff = Math.min(this.backoff * 2, 30_000);
        return;
      }
    }
  }

  private async sync(term: number): Promise<void> {
    const writes = mirroredObjects(this.watch!.list(), this.mirror.target, this.mirror.serverPort, this.watch!.serviceUid());
    for (const w of writes) {
      if (term !== this.term) return; // leadership lost: no write starts
      const body = JSON.stringify(w.object);
      if (this.lastWritten.get(w.path) === body) continue;
      await this.write(w);
      if (term !== this.term) return;
      this.lastWritten.set(w.path, body);
    }
  }
}
