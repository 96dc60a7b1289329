// The executors of works in each local WEC: charts/kubestellar-view/files/agent/wec-executors.yaml
// (what the chart's agent.pull part installs in a WEC) —
// the restricted default executor (namespaced workloads and Namespaces, never in the system,
// executors' or agents' namespaces, never a Pod Security label: a ValidatingAdmissionPolicy) and
// the admin executor (cluster-admin, for policies delivering cluster RBAC, CRDs and other
// cluster-scoped objects) — and wec-default-executor-cluster-wide.yaml, the default executor bound
// cluster-wide (the chart binds it per namespace unless asked; the local spaces' tests and demo
// use any namespace), server-side applied to every WEC by `ksview spaces up` (so running it again
// changes nothing).
// Each WDS's `ksview serve` is started with `--default-executor` naming the default one.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { closeUpstream, serverSideApply, upstreamFromKubeconfig } from '../kube/upstream.js';
import { CHART_FILES_DIR, chartFile } from '../util/chart-files.js';

/** The chart files applied, in order (relative to the chart's files/). */
export const EXECUTORS_FILES = ['agent/wec-executors.yaml', 'agent/wec-default-executor-cluster-wide.yaml'];
export const EXECUTORS_NAMESPACE = 'kubestellar-view-executors';
/** The default executor's ServiceAccount (serve's --default-executor in the local spaces). */
export const DEFAULT_EXECUTOR = { namespace: EXECUTORS_NAMESPACE, name: 'default-executor' };
/** The executor with cluster-admin in the WECs, named explicitly by the policies that need it. */
export const ADMIN_EXECUTOR = { namespace: EXECUTORS_NAMESPACE, name: 'admin-executor' };

interface Doc { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }

const PLURALS: Record<string, string> = {
  Namespace: 'namespaces', ServiceAccount: 'serviceaccounts', ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies', ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
};

function pathOf(d: Doc): string {
  const plural = PLURALS[d.kind];
  if (!plural) throw new Error(`${CHART_FILES_DIR}/agent: unexpected kind ${d.kind} in the executors' files`);
  const base = d.apiVersion === 'v1' ? '/api/v1' : `/apis/${d.apiVersion}`;
  return `${base}${d.metadata.namespace ? `/namespaces/${d.metadata.namespace}` : ''}/${plural}/${d.metadata.name}`;
}

/** Applies the executors to the WEC of this kubeconfig. */
export async function ensureWecExecutors(kubeconfig: string): Promise<void> {
  const docs = EXECUTORS_FILES.flatMap((f) => YAML.parseAllDocuments(readFileSync(chartFile(f), 'utf8')).map((d) => d.toJS() as Doc).filter(Boolean));
  const up = await upstreamFromKubeconfig(kubeconfig);
  try {
    for (const d of docs) await serverSideApply(up, pathOf(d), d, 'ksview-spaces');
  } finally {
    await closeUpstream(up);
  }
}
