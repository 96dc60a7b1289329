// Wrapping a workload object into the ManifestWork that carries it to one cluster (pure):
// - the object is reduced to what its author wrote, with KubeStellar's built-in transformations
//   (docs "Transforming Desired State"): from every object the server-set metadata (uid,
//   resourceVersion, generation, creationTimestamp, deletion*, managedFields, ownerReferences,
//   finalizers, selfLink, generateName), the last-applied annotation and status, and what the
//   status controller marks the WDS object with (label kubestellar.io/executing-count, annotation
//   view.kubestellar.io/status-returned-from: about the WDS object, not the WEC's); from a Service
//   what its cluster allocated (clusterIP unless "None", clusterIPs unless they hold "None",
//   ipFamilies, ipFamilyPolicy, traffic policies, sessionAffinity, every port's nodePort unless
//   annotation kubestellar.io/annotations/preserve=nodeport); from a Job what its controller set
//   (selector, controller-uid labels, the job-tracking annotation);
// - CustomTransforms for its group/resource remove more (JSONPath-like `$.a.b["c.d"][0]`);
// - template expansion (annotation control.kubestellar.io/expand-templates) is Go's own
//   text/template, run by the Go helper (../placement/template-expander.ts), not here;
// - one ManifestWork per (WDS, object, cluster): a stable name from the WDS and the object's
//   identity, labels naming the WDS and every policy that selected it, and a manifestConfig that
//   makes the agent apply it server-side under a field manager naming the WDS (CreateOnly when
//   the policies say so) and report its status (feedbackRules); a Namespace sent only for what is
//   in it is created if missing and never deleted (CreateOnly, SelectivelyOrphan). Over OCM's
//   500 KiB limit is a WrapError.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { isJsonObject } from '../../kube/json.js';
import type { JsonObject } from '../../kube/objects.js';
import { BUNDLE_ANNOTATION, WDS_LABEL, type DeleteOption, type FeedbackRule, type JsonPathRule, type ManifestConfigOption, type ManifestWork, type ResourceIdentifier } from '../../kube/ocm-api.js';
import { EXECUTING_COUNT_LABEL, RETURNED_FROM_ANNOTATION } from './marks.js';

export const EXPAND_TEMPLATES_ANNOTATION = 'control.kubestellar.io/expand-templates';
export { BUNDLE_ANNOTATION, WDS_LABEL };
export const POLICY_LABEL_PREFIX = 'bindingpolicy.view.kubestellar.io/';
/** OCM refuses a ManifestWork whose manifests exceed this. */
export const MAX_MANIFESTS_BYTES = 500 * 1024;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const CONTROLLER_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];
const JOB_TRACKING = 'batch.kubernetes.io/job-tracking';
/**
 * With one of these annotations set to `nodeport`, a Service's nodePorts travel. KubeStellar's docs
 * name `kubestellar.io/annotations/preserve`, which kube-apiserver refuses as a key (two slashes);
 * its code has read `annotations.kubestellar.io/preserve` and `control.kubestellar.io/preserve`.
 */
export const PRESERVE_ANNOTATIONS = ['kubestellar.io/annotations/preserve', 'annotations.kubestellar.io/preserve', 'control.kubestellar.io/preserve'];
const SERVICE_ALLOCATED = ['ipFamilies', 'ipFamilyPolicy', 'externalTrafficPolicy', 'internalTrafficPolicy', 'sessionAffinity'];

export class WrapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WrapError';
  }
}

export interface ObjectIdentity {
  group: string;
  version: string;
  resource: string;
  namespace: string;
  name: string;
}

/** Removes `names` from the object's labels or annotations, and the map when left empty. */
function dropKeys(meta: unknown, field: 'labels' | 'annotations', names: readonly string[]): void {
  if (!isJsonObject(meta)) return;
  const map = meta[field];
  if (!isJsonObject(map)) return;
  for (const n of names) delete map[n];
  if (Object.keys(map).length === 0) delete meta[field];
}

/** What the WEC's Service allocator sets anew: only a headless Service's "None" travels. */
function stripService(spec: JsonObject, meta: JsonObject | undefined): void {
  for (const f of SERVICE_ALLOCATED) delete spec[f];
  if (spec.clusterIP !== 'None') delete spec.clusterIP;
  if (Array.isArray(spec.clusterIPs) && spec.clusterIPs.includes('None')) spec.clusterIPs = ['None'];
  else delete spec.clusterIPs;
  const annotations = meta && isJsonObject(meta.annotations) ? meta.annotations : {};
  if (!PRESERVE_ANNOTATIONS.some((a) => annotations[a] === 'nodeport') && Array.isArray(spec.ports)) {
    for (const port of spec.ports) if (isJsonObject(port)) delete port.nodePort;
  }
}

/** A copy of obj without what the server, not its author, set (KubeStellar's built-in transformations). */
export function stripServerFields(obj: JsonObject, id: Pick<ObjectIdentity, 'group' | 'resource'>): JsonObject {
  const out = structuredClone(obj);
  delete out.status;
  const meta = isJsonObject(out.metadata) ? out.metadata : undefined;
  if (meta) {
    for (const k of ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds',
      'managedFields', 'ownerReferences', 'finalizers', 'selfLink', 'generateName']) delete meta[k];
    dropKeys(meta, 'annotations', [LAST_APPLIED, RETURNED_FROM_ANNOTATION]);
    // What the status controller writes on the WDS object is about the WDS object.
    dropKeys(meta, 'labels', [EXECUTING_COUNT_LABEL]);
  }
  const spec = isJsonObject(out.spec) ? out.spec : undefined;
  if (id.group === '' && id.resource === 'services' && spec) stripService(spec, meta);
  if (id.group === 'batch' && id.resource === 'jobs') {
    if (spec) {
      delete spec.selector;
      if (isJsonObject(spec.template)) dropKeys(spec.template.metadata, 'labels', CONTROLLER_UID_LABELS);
    }
    dropKeys(meta, 'labels', CONTROLLER_UID_LABELS);
    dropKeys(meta, 'annotations', [JOB_TRACKING]);
  }
  return out;
}

/** `$.spec.selector`, `$.metadata.labels["a.b/c"]`, `$.spec.ports[0]` → path segments. */
export function parseRemovePath(path: string): (string | number)[] {
  if (!path.startsWith('$')) throw new WrapError(`remove path ${JSON.stringify(path)}: must start with $`);
  const segs: (string | number)[] = [];
  let i = 1;
  while (i < path.length) {
    if (path[i] === '.') {
      const m = /^[A-Za-z_$][\w$-]*/.exec(path.slice(i + 1));
      if (!m) throw new WrapError(`remove path ${JSON.stringify(path)}: expected a field name at ${i + 1}`);
      segs.push(m[0]);
      i += 1 + m[0].length;
    } else if (path[i] === '[') {
      const rest = path.slice(i);
      const str = /^\[\s*(["'])((?:\\.|(?!\1).)*)\1\s*\]/.exec(rest);
      const num = /^\[\s*(\d+)\s*\]/.exec(rest);
      if (str) {
        segs.push(str[2]!.replace(/\\(.)/g, '$1'));
        i += str[0].length;
      } else if (num) {
        segs.push(Number(num[1]));
        i += num[0].length;
      } else {
        throw new WrapError(`remove path ${JSON.stringify(path)}: unsupported selector at ${i} (only names, quoted keys and indexes)`);
      }
    } else {
      throw new WrapError(`remove path ${JSON.stringify(path)}: unexpected ${JSON.stringify(path[i])} at ${i}`);
    }
  }
  if (segs.length === 0) throw new WrapError(`remove path ${JSON.stringify(path)}: removes the whole object`);
  return segs;
}

/** A copy of obj with each path removed (a path that addresses nothing is fine). */
export function applyRemovals(obj: JsonObject, paths: readonly string[]): JsonObject {
  const out = structuredClone(obj);
  for (const p of paths) {
    const segs = parseRemovePath(p);
    let node: unknown = out;
    for (const s of segs.slice(0, -1)) {
      node = Array.isArray(node) && typeof s === 'number' ? node[s] : isJsonObject(node) && typeof s === 'string' ? node[s] : undefined;
      if (node === undefined) break;
    }
    const last = segs[segs.length - 1]!;
    if (Array.isArray(node) && typeof last === 'number' && last < node.length) node.splice(last, 1);
    else if (isJsonObject(node) && typeof last === 'string') delete node[last];
  }
  return out;
}

/** Names computed: status readers ask an object's work name once per cluster (1,000 times an object). */
const workNames = new LRUCache<string, string>({ max: 200_000 });

/** Kubernetes' bound of a DNS label, which a work name keeps (OCM's tooling uses it as a label value). */
const MAX_NAME = 63;
/** Hex digits of an object's hash when its WDS name is whole in the work name. */
const OBJECT_HASH = 20;
/** Hex digits of the hash of the WDS name and what the work carries, when the WDS name is too long to be whole: 128 bits. */
const WDS_HASH = 32;

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/**
 * `<wds>-<plain>` when that fits in a DNS label, else `<start of wds>-<hashed(h)>` where h is
 * WDS_HASH hex digits of the whole WDS name and `seed`: two WDSs get one name only if their names
 * are equal, or a 128-bit hash collides. The first form is what names were before, kept so that an
 * upgrade renames nothing; the WDS name is whole in it, the tail of a fixed shape. The two forms
 * never give one name: where the first has the '-' before its tail's hash, the second has a hex digit.
 */
function wdsScopedName(wds: string, plain: string, seed: string, hashed: (h: string) => string): string {
  const whole = `${wds}-${plain}`;
  if (whole.length <= MAX_NAME) return whole;
  const tail = hashed(sha256(`${wds}\u0000${seed}`).slice(0, WDS_HASH));
  // A WDS name is a DNS label: its first characters are one too once trailing '-' are cut.
  return `${wds.slice(0, Math.max(1, MAX_NAME - 1 - tail.length)).replace(/-+$/, '')}-${tail}`;
}

/**
 * The ManifestWork name for an object of a WDS: stable, unique per (WDS, object), a DNS label:
 * `<wds>-<20 hex>`, or `<start of wds>-<32 hex>` for a WDS name longer than 42 (wdsScopedName).
 */
export function manifestWorkName(wds: string, id: ObjectIdentity): string {
  const seed = `${id.group}/${id.resource}/${id.namespace}/${id.name}`;
  const k = `${wds}\u0000${seed}`;
  let name = workNames.get(k);
  if (name === undefined) {
    name = wdsScopedName(wds, sha256(seed).slice(0, OBJECT_HASH), seed, (h) => h);
    workNames.set(k, name);
  }
  return name;
}

/** The label naming a policy on the works it selects (hashed when the name is too long for a label key). */
export function policyLabel(policy: string): string {
  const name = policy.length <= 63 ? policy : `h-${createHash('sha256').update(policy).digest('hex').slice(0, 40)}`;
  return `${POLICY_LABEL_PREFIX}${name}`;
}

/** On a bundled work: the encoded keys of its manifests' WDS objects, a JSON array in manifest order. */
export const SOURCES_ANNOTATION = 'view.kubestellar.io/sources';

/** A bundle's group: its objects' policies (the work's labels) and executor, hashed. */
export function bundleGroup(labels: Readonly<Record<string, string>>, executor: unknown): string {
  const policies = Object.keys(labels).filter((l) => l.startsWith(POLICY_LABEL_PREFIX)).sort();
  return createHash('sha256').update(JSON.stringify([policies, executor ?? null])).digest('hex').slice(0, 16);
}

/**
 * The name of slot `slot` of a bundle group's works in a cluster: stable, unique per (WDS, group,
 * slot), a DNS label: `<wds>-b<group>-<slot>`, or `<start of wds>-b<32 hex>-<slot>` when that is
 * too long (wdsScopedName). It ends in `-<digits>`, a work of one object's in 20 or 32 hex digits.
 */
export function bundleWorkName(wds: string, group: string, slot: number): string {
  return wdsScopedName(wds, `b${group}-${slot}`, group, (h) => `b${h}-${slot}`);
}

export interface WorkOptions {
  wds: string;
  cluster: string;
  id: ObjectIdentity;
  policies: readonly string[];
  createOnly: boolean;
  /**
   * A Namespace sent only because objects in it were selected (Argo CD's CreateNamespace): created
   * if missing, never updated (CreateOnly) and never deleted with its work (SelectivelyOrphan).
   */
  impliedNamespace?: boolean;
}

export type { ManifestWork, ResourceIdentifier } from '../../kube/ocm-api.js';

/**
 * The status feedback that makes an object's availability reach the ITS. OCM v1.2.0's agent knows
 * a WellKnownStatus for apps/v1 Deployment and DaemonSet, batch/v1 Job and v1 Pod
 * (pkg/work/spoke/statusfeedback/rules); for a few more kinds whose readiness users look at, the
 * equivalent scalar JSONPaths. Every other kind gets no rule (OCM's agent would report nothing for
 * it, and a rule for a field it lacks only adds a failed-feedback note).
 */
const WELL_KNOWN_STATUS = new Set(['apps/Deployment', 'apps/DaemonSet', 'batch/Job', '/Pod']);
const JSON_PATHS: Record<string, JsonPathRule[]> = {
  'apps/StatefulSet': [
    { name: 'ReadyReplicas', path: '.status.readyReplicas' },
    { name: 'Replicas', path: '.status.replicas' },
    { name: 'AvailableReplicas', path: '.status.availableReplicas' },
    { name: 'UpdatedReplicas', path: '.status.updatedReplicas' },
  ],
  'apps/ReplicaSet': [
    { name: 'ReadyReplicas', path: '.status.readyReplicas' },
    { name: 'Replicas', path: '.status.replicas' },
    { name: 'AvailableReplicas', path: '.status.availableReplicas' },
  ],
  '/PersistentVolumeClaim': [{ name: 'Phase', path: '.status.phase' }],
  'apiextensions.k8s.io/CustomResourceDefinition': [{ name: 'Established', path: '.status.conditions[?(@.type=="Established")].status' }],
  'apiregistration.k8s.io/APIService': [{ name: 'Available', path: '.status.conditions[?(@.type=="Available")].status' }],
  'batch/CronJob': [{ name: 'LastScheduleTime', path: '.status.lastScheduleTime' }],
};

/** The feedbackRules of a manifest of that group and kind (none: undefined). */
export function feedbackRules(group: string, kind: string): FeedbackRule[] | undefined {
  const k = `${group}/${kind}`;
  if (WELL_KNOWN_STATUS.has(k)) return [{ type: 'WellKnownStatus' }];
  const paths = JSON_PATHS[k];
  return paths ? [{ type: 'JSONPaths', jsonPaths: paths.map((p) => ({ ...p })) }] : undefined;
}

/** The ManifestWork carrying `manifest` (already stripped, transformed and expanded) to one cluster. */
export function manifestWork(manifest: JsonObject, o: WorkOptions): ManifestWork {
  const size = Buffer.byteLength(JSON.stringify(manifest));
  if (size > MAX_MANIFESTS_BYTES) {
    throw new WrapError(`${o.id.resource}${o.id.group ? `.${o.id.group}` : ''} ${o.id.namespace ? `${o.id.namespace}/` : ''}${o.id.name} is ${size} bytes, over the ManifestWork limit of ${MAX_MANIFESTS_BYTES}`);
  }
  const labels: Record<string, string> = { [WDS_LABEL]: o.wds };
  for (const p of o.policies) labels[policyLabel(p)] = '';
  const resourceIdentifier: ResourceIdentifier = { group: o.id.group, resource: o.id.resource, name: o.id.name, namespace: o.id.namespace };
  // OCM's own resourceIdentifier omits an empty namespace; so does ours (the hash of what is written stays stable).
  const rid: ManifestConfigOption['resourceIdentifier'] = o.id.namespace ? resourceIdentifier : { group: o.id.group, resource: o.id.resource, name: o.id.name };
  const implied = o.impliedNamespace === true && o.id.group === '' && o.id.resource === 'namespaces';
  const config: ManifestConfigOption = {
    resourceIdentifier: rid,
    updateStrategy: o.createOnly || implied
      ? { type: 'CreateOnly' }
      : { type: 'ServerSideApply', serverSideApply: { fieldManager: `work-agent-kubestellar-${o.wds}`, force: false } },
  };
  const rules = feedbackRules(o.id.group, typeof manifest.kind === 'string' ? manifest.kind : '');
  if (rules) config.feedbackRules = rules;
  const deleteOption: DeleteOption | undefined = implied
    ? { propagationPolicy: 'SelectivelyOrphan', selectivelyOrphans: { orphaningRules: [{ group: '', resource: 'namespaces', name: o.id.name, namespace: '' }] } }
    : undefined;
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: manifestWorkName(o.wds, o.id), namespace: o.cluster, labels },
    spec: {
      workload: { manifests: [manifest] },
      ...(deleteOption ? { deleteOption } : {}),
      manifestConfigs: [config],
    },
  };
}
