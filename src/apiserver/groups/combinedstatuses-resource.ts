// The virtual CombinedStatuses (namespaced, get/list/watch, Tables): one per (workload object,
// BindingPolicy) pair whose policy names StatusCollectors for it, KubeStellar's shape (`results` at
// the top level), computed by the status controller and never stored. A fastify plugin, as the
// Bindings (../virtual/read-only-resource.ts), registered once per group that serves it
// (./group-resources.ts): combinedstatuses.view.kubestellar.io for direct clients and
// combinedstatuses.control.kubestellar.io inside the view, each answer in its path's apiVersion,
// one feed for both (../virtual/feed.ts). Without a source
// the lists are empty. Label selectors apply (KubeStellar's users find an object's CombinedStatuses
// by its five status.kubestellar.io labels), and field selectors on metadata.name and
// metadata.namespace. A CombinedStatus is shown only to a reader who may `get` its workload object
// (named by those labels; ../auth/subject-access.ts): its results are that object's data, a Secret's
// included when a collector selects it.
import type { FastifyInstance } from 'fastify';
import { age } from '../../kube/duration.js';
import type { KubeObject, ObjectMeta } from '../../kube/objects.js';
import { column, type KindPrinter } from '../../storage/printing/printer.js';
import { COMBINED_STATUSES, VERSION } from './view-group.js';
import type { Subject } from '../auth/subject-access.js';
import { objectKey, sharedFeeds, VirtualFeed } from '../virtual/feed.js';
import { registerVirtualResource, type ResourceAccess } from '../virtual/read-only-resource.js';

/** What computes the CombinedStatuses (the status controller). Keys are `<namespace>/<name>`. */
export interface CombinedStatusSource {
  combinedStatuses(): KubeObject[];
  combinedStatus(namespace: string, name: string): KubeObject | undefined;
  /** Called with the key of a CombinedStatus that may have changed, appeared or gone. */
  onCombinedStatusChange(cb: (key: string) => void): () => void;
}

/** One value of a row: a union tagged by `type` (a Number's value is a decimal string, under `float`). */
interface Value { type: string; string?: string; float?: string; bool?: boolean; object?: unknown; array?: unknown }

interface NamedStatusCombination { name: string; columnNames: string[]; rows?: { columns: Value[] }[]; errors?: string[] }

interface CombinedStatus extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace: string; resourceVersion?: string; creationTimestamp?: string };
  results?: NamedStatusCombination[];
}

/** The labels that say what a CombinedStatus is of, as KubeStellar writes them. */
const SUBJECT_LABELS = [
  ['SUBJECT_GROUP', 'status.kubestellar.io/api-group', 'API group of the workload object'],
  ['SUBJECT_RSC', 'status.kubestellar.io/resource', 'Resource (plural) of the workload object'],
  ['SUBJECT_NS', 'status.kubestellar.io/namespace', 'Namespace of the workload object'],
  ['SUBJECT_NAME', 'status.kubestellar.io/name', 'Name of the workload object'],
  // KubeStellar's printcolumn reads status.kubestellar.io/policy, a label nothing writes (kubestellar/kubestellar#2564).
  ['BINDINGPOLICY', 'status.kubestellar.io/binding-policy', 'The BindingPolicy whose StatusCollectors make the results'],
] as const;

/** The workload object a CombinedStatus is of, by its labels (undefined when they do not say: shown to nobody). */
function subjectOf(cs: CombinedStatus): Subject | undefined {
  const l = cs.metadata.labels ?? {};
  const group = l['status.kubestellar.io/api-group'];
  const resource = l['status.kubestellar.io/resource'];
  const namespace = l['status.kubestellar.io/namespace'];
  const name = l['status.kubestellar.io/name'];
  // Of upsynced objects (docs/upsync.md): every object of the resource in the namespace, so the
  // reader must be able to get them all there (a review without a name).
  if (group !== undefined && resource && namespace && l['status.kubestellar.io/upsync'] === 'true') return { group, resource, namespace, name: '' };
  if (group === undefined || !resource || !name) return undefined;
  return { group, resource, ...(namespace ? { namespace } : {}), name };
}

/** The RESULTS cell stays about this short, so that a row of `kubectl get -w` fits a wide terminal. */
const SUMMARY_MAX = 120;

function valueText(v: Value | undefined): string {
  switch (v?.type) {
    case 'Number': return v.float ?? '';
    case 'String': return v.string ?? '';
    case 'Bool': return String(v.bool ?? false);
    case 'Null': return 'null';
    case 'Object': return '{…}';
    case 'Array': return '[…]';
    default: return '?';
  }
}

/**
 * Each result's first row as `name: column=value,…`, with the count of further rows and of errors:
 * enough to see a change go by in `kubectl get -w`, not the whole result (`-o yaml` has it).
 */
function resultsSummary(results: NamedStatusCombination[] | undefined): string {
  if (!results?.length) return '<none>';
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const text = results.map((r) => {
    const [first, ...more] = r.rows ?? [];
    const row = first ? r.columnNames.map((c, i) => `${c}=${valueText(first.columns[i])}`).join(',') : '(no rows)';
    return `${r.name}: ${row}${more.length ? ` (+${plural(more.length, 'row')})` : ''}${r.errors?.length ? ` (${plural(r.errors.length, 'error')})` : ''}`;
  }).join('; ');
  const chars = [...text];
  return chars.length > SUMMARY_MAX ? `${chars.slice(0, SUMMARY_MAX - 1).join('')}…` : text;
}

const COMBINED_STATUS_PRINTER: KindPrinter<CombinedStatus> = {
  columns: [
    { ...column('Name', 'string', 'Name of the CombinedStatus: <workload object uid>.<BindingPolicy uid>'), format: 'name' },
    ...SUBJECT_LABELS.map(([name, , description]) => column(name, 'string', description)),
    column('RESULTS', 'string', 'The first row of each StatusCollector\'s result'),
    column('Age', 'string', 'Time since the later of the workload object\'s and the BindingPolicy\'s creation'),
  ],
  cells: (cs, now) => [
    cs.metadata.name,
    ...SUBJECT_LABELS.map(([, label]) => cs.metadata.labels?.[label] ?? '<none>'),
    resultsSummary(cs.results),
    age(cs.metadata.creationTimestamp, now.getTime()),
  ],
};

/** What tells whether a CombinedStatus changed (not its resourceVersion). */
const content = (cs: CombinedStatus) => JSON.stringify([cs.metadata.uid, cs.metadata.labels, cs.metadata.creationTimestamp, cs.results]);

/** Keyed by `<namespace>/<name>`, as the source names them. */
const feedOf = sharedFeeds((source: CombinedStatusSource | undefined) => new VirtualFeed<CombinedStatus>(source && {
  all: () => source.combinedStatuses() as CombinedStatus[],
  one: (key) => {
    const slash = key.indexOf('/');
    return slash < 0 ? undefined : source.combinedStatus(key.slice(0, slash), key.slice(slash + 1)) as CombinedStatus | undefined;
  },
  keyOf: (cs) => objectKey(cs.metadata.namespace, cs.metadata.name),
  onChange: (cb) => source.onCombinedStatusChange(cb),
}, content));

export interface CombinedStatusesOptions extends ResourceAccess {
  /** The status controller (none without an ITS: the lists are empty). */
  source: CombinedStatusSource | undefined;
}

/**
 * GET (get, list, watch) and the refused writes of `/apis/<group>/v1alpha1/combinedstatuses`
 * and `/apis/<group>/v1alpha1/namespaces/<namespace>/combinedstatuses`. `authorize` checks
 * `combinedstatuses` in `group`, in the path's namespace; `visibility` which workload objects the
 * reader may get.
 */
export async function combinedStatusesResource(app: FastifyInstance, { source, group, authorize, visibility }: CombinedStatusesOptions): Promise<void> {
  registerVirtualResource(app, {
    kind: COMBINED_STATUSES, group, version: VERSION, feed: feedOf(source), printer: COMBINED_STATUS_PRINTER, labelSelectors: true, authorize,
    reader: (req) => async (items) => {
      const vis = await visibility(req).resolve(items.flatMap((cs) => subjectOf(cs) ?? []));
      return {
        visible: (cs) => {
          const s = subjectOf(cs);
          return s !== undefined && vis.may(s);
        },
        show: (cs) => cs,
        leftOut: vis.leftOut,
      };
    },
  });
}
