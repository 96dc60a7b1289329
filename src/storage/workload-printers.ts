// Server-side Table printing (what `kubectl get` shows) for the native kinds the view shows as
// upsynced objects of a WEC (docs/upsync.md). Contract:
// - workloadPrinterFor(group, resource) gives kube-apiserver v1.33's columns
//   (pkg/printers/internalversion/printers.go) for the common kinds a WEC makes — pods,
//   configmaps, secrets, deployments, replicasets, persistentvolumeclaims — and, for every other
//   kind, NAME and AGE, the columns kube-apiserver prints for a custom resource without printer
//   columns (ksview-native has no Table conversion to reuse, and ./kinds/ covers
//   only the denatured kinds, which it is asked first for);
// - cells are computed from the v1 JSON of the object as the WEC served it, Go's zero values for
//   absent fields; server-side printing is always "wide", so priority-1 columns have cells too.
//   The pod STATUS follows kube's printPod for plain, init and terminating containers; sidecar
//   (restartable init) containers are counted as init containers.
import { age as ageSince, humanDuration } from '../kube/duration.js';
import { isJsonObject } from '../kube/json.js';
import type { JsonObject, KubeObject } from '../kube/objects.js';
import { printerFor } from './kinds/index.js';
import { column, type KindPrinter } from './printing/printer.js';

const obj = (v: unknown): JsonObject => (isJsonObject(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const spec = (o: KubeObject) => obj(o.spec);
const status = (o: KubeObject) => obj(o.status);

const NAME = { ...column('Name', 'string', 'Name must be unique within a namespace.'), format: 'name' };
const AGE = column('Age', 'string', 'CreationTimestamp is a timestamp representing the server time when this object was created.');
const name = (o: KubeObject) => str(o.metadata?.name);
const age = (o: KubeObject, now: Date) => ageSince(str(o.metadata?.creationTimestamp), now.getTime());

/** A custom resource without printer columns, as kube-apiserver prints it: NAME and AGE. */
export const NAME_AGE_PRINTER: KindPrinter = {
  columns: [NAME, { ...column('Age', 'date', AGE.description) }],
  cells: (o, now) => [name(o), age(o, now)],
};

/** metav1.FormatLabelSelector: matchLabels sorted, then expressions; `<none>` when empty. */
function selectorText(sel: JsonObject): string {
  const parts = Object.keys(obj(sel.matchLabels)).sort().map((k) => `${k}=${str(obj(sel.matchLabels)[k])}`);
  for (const e of list(sel.matchExpressions).map(obj)) {
    const values = list(e.values).map(str);
    const op = str(e.operator);
    if (op === 'In' || op === 'NotIn') parts.push(`${str(e.key)} ${op.toLowerCase()} (${values.join(',')})`);
    else parts.push(op === 'DoesNotExist' ? `!${str(e.key)}` : str(e.key));
  }
  return parts.length > 0 ? parts.join(',') : '<none>';
}

/** The containers and images cells of a pod template (wide). */
function containerCells(o: KubeObject): [string, string, string] {
  const containers = list(obj(obj(spec(o).template).spec).containers).map(obj);
  return [containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(','), selectorText(obj(spec(o).selector))];
}

/** A terminated container's reason as printPod words it. */
function terminatedReason(t: JsonObject): string {
  if (str(t.reason)) return str(t.reason);
  return num(t.signal) !== 0 ? `Signal:${num(t.signal)}` : `ExitCode:${num(t.exitCode)}`;
}

const podCondition = (o: KubeObject, type: string) => list(status(o).conditions).map(obj).some((c) => c.type === type && c.status === 'True');

/** printPod: READY, STATUS, RESTARTS. */
function podCells(o: KubeObject, now: Date): [string, string, string] {
  const st = status(o);
  let reason = str(st.reason) || str(st.phase);
  let restarts = 0;
  let lastRestart = 0;
  const countRestarts = (c: JsonObject) => {
    restarts += num(c.restartCount);
    const finished = Date.parse(str(obj(obj(c.lastState).terminated).finishedAt));
    if (!Number.isNaN(finished) && finished > lastRestart) lastRestart = finished;
  };
  const inits = list(st.initContainerStatuses).map(obj);
  let initializing = false;
  for (const [i, c] of inits.entries()) {
    countRestarts(c);
    const state = obj(c.state);
    const t = isJsonObject(state.terminated) ? state.terminated : undefined;
    const w = isJsonObject(state.waiting) ? state.waiting : undefined;
    if (t && num(t.exitCode) === 0) continue;
    initializing = true;
    if (t) reason = `Init:${terminatedReason(t)}`;
    else if (w && str(w.reason) && w.reason !== 'PodInitializing') reason = `Init:${str(w.reason)}`;
    else reason = `Init:${i}/${list(spec(o).initContainers).length}`;
    break;
  }
  let ready = 0;
  if (!initializing || podCondition(o, 'Initialized')) {
    restarts = 0;
    let running = false;
    for (const c of list(st.containerStatuses).map(obj).reverse()) {
      countRestarts(c);
      const state = obj(c.state);
      if (isJsonObject(state.waiting) && str(state.waiting.reason)) reason = str(state.waiting.reason);
      else if (isJsonObject(state.terminated) && str(state.terminated.reason)) reason = str(state.terminated.reason);
      else if (isJsonObject(state.terminated)) reason = terminatedReason(state.terminated);
      else if (c.ready === true && isJsonObject(state.running)) {
        running = true;
        ready++;
      }
    }
    if (reason === 'Completed' && running) reason = podCondition(o, 'Ready') ? 'Running' : 'NotReady';
  }
  if (o.metadata?.deletionTimestamp) reason = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  const restartText = lastRestart > 0 ? `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)` : String(restarts);
  return [`${ready}/${list(spec(o).containers).length}`, reason, restartText];
}

const POD: KindPrinter = {
  columns: [NAME, column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    AGE, column('IP', 'string', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', 1),
    column('Node', 'string', 'Name of the Node to which this pod is assigned', 1),
    column('Nominated Node', 'string', 'Name of the node where the pod is nominated to run', 1),
    column('Readiness Gates', 'string', 'Readiness gates of the pod', 1)],
  cells: (o, now) => {
    const gates = list(spec(o).readinessGates).map(obj);
    const met = gates.filter((g) => podCondition(o, str(g.conditionType))).length;
    return [name(o), ...podCells(o, now), age(o, now), str(status(o).podIP) || '<none>', str(spec(o).nodeName) || '<none>',
      str(status(o).nominatedNodeName) || '<none>', gates.length > 0 ? `${met}/${gates.length}` : '<none>'];
  },
};

const dataCount = (o: KubeObject) => Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length;
const CONFIG_MAP: KindPrinter = {
  columns: [NAME, column('Data', 'integer', 'Data contains the configuration data.'), AGE],
  cells: (o, now) => [name(o), dataCount(o), age(o, now)],
};
const SECRET: KindPrinter = {
  columns: [NAME, column('Type', 'string', 'Used to facilitate programmatic handling of secret data.'), column('Data', 'integer', 'Data contains the secret data.'), AGE],
  cells: (o, now) => [name(o), str(o.type), Object.keys(obj(o.data)).length, age(o, now)],
};

const WIDE_TEMPLATE = [column('Containers', 'string', 'Names of each container in the template.', 1),
  column('Images', 'string', 'Images referenced by each container in the template.', 1),
  column('Selector', 'string', 'Label selector for pods.', 1)];
const replicas = (o: KubeObject) => (typeof spec(o).replicas === 'number' ? num(spec(o).replicas) : 0);
const DEPLOYMENT: KindPrinter = {
  columns: [NAME, column('Ready', 'string', 'Number of the pod with ready state'),
    column('Up-to-date', 'integer', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
    column('Available', 'integer', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
    AGE, ...WIDE_TEMPLATE],
  cells: (o, now) => [name(o), `${num(status(o).readyReplicas)}/${replicas(o)}`, num(status(o).updatedReplicas), num(status(o).availableReplicas), age(o, now), ...containerCells(o)],
};
const REPLICA_SET: KindPrinter = {
  columns: [NAME, column('Desired', 'integer', 'Replicas is the number of desired replicas.'),
    column('Current', 'integer', 'Replicas is the most recently observed number of replicas.'),
    column('Ready', 'integer', 'The number of ready replicas for this replica set.'), AGE, ...WIDE_TEMPLATE],
  cells: (o, now) => [name(o), replicas(o), num(status(o).replicas), num(status(o).readyReplicas), age(o, now), ...containerCells(o)],
};

const ACCESS_MODES: [string, string][] = [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']];
const PVC: KindPrinter = {
  columns: [NAME, column('Status', 'string', 'Status of the claim'), column('Volume', 'string', 'The binding reference to the PersistentVolume backing this claim.'),
    column('Capacity', 'string', 'The actual resources of the underlying volume.'), column('Access Modes', 'string', 'The access modes of the volume.'),
    column('StorageClass', 'string', 'Name of the StorageClass required by the claim.'),
    column('VolumeAttributesClass', 'string', 'The VolumeAttributesClass used by the claim.'), AGE,
    column('VolumeMode', 'string', 'Defines what type of volume is required by the claim.', 1)],
  cells: (o, now) => {
    const volume = str(spec(o).volumeName);
    const modes = list(status(o).accessModes).map(str);
    const storageClass = str(spec(o).storageClassName) || str(o.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class']);
    return [name(o), o.metadata?.deletionTimestamp ? 'Terminating' : str(status(o).phase), volume,
      volume ? str(obj(status(o).capacity).storage) : '', volume ? ACCESS_MODES.filter(([m]) => modes.includes(m)).map(([, s]) => s).join(',') : '',
      storageClass, str(spec(o).volumeAttributesClassName) || '<unset>', age(o, now), str(spec(o).volumeMode) || '<unset>'];
  },
};

const PRINTERS = new Map<string, KindPrinter>([
  ['/pods', POD], ['/configmaps', CONFIG_MAP], ['/secrets', SECRET], ['/persistentvolumeclaims', PVC],
  ['apps/deployments', DEPLOYMENT], ['apps/replicasets', REPLICA_SET],
]);

/** The Table printer of a native kind as a WEC serves it (NAME and AGE when none is known here). */
export function workloadPrinterFor(group: string, resource: string): KindPrinter {
  return PRINTERS.get(`${group}/${resource}`) ?? printerFor(group, resource) ?? NAME_AGE_PRINTER;
}
