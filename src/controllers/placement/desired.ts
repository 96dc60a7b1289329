// The works one object wants, per destination cluster (no writes): the object stripped by
// KubeStellar's built-in transformations, the CustomTransforms of its kind applied, expanded per
// cluster by Go's text/template when it asks for it (annotation control.kubestellar.io/expand-
// templates: "true"; properties from the cluster's ConfigMap in the ITS namespace
// customization-properties, its annotations, its labels, clusterName), wrapped in its ManifestWork.
// A cluster it cannot be expanded for is an expansion error of that cluster (the caller freezes
// the policies sending it there); one it cannot be wrapped for (over OCM's size limit) a wrap error.
// A Namespace goes to the clusters in `impliedNamespace` only for what is in it (see ../model/wrapping.ts).
// RBAC objects are never expanded (an expansion error everywhere): their grant was checked as written.
import type { Store } from '../../kube/informer.js';
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import { templateName, templateProperties, type ExpansionResult } from './template-expander.js';
import { applyRemovals, EXPAND_TEMPLATES_ANNOTATION, manifestWork, stripServerFields, WrapError, type ManifestWork } from '../model/wrapping.js';
import type { CustomTransform, ManagedCluster } from '../model/api.js';
import type { SentObject } from '../model/sent.js';

/** The ITS namespace of the clusters' property ConfigMaps (KubeStellar's). */
export const PROPERTIES_NAMESPACE = 'customization-properties';

/** What expands templates: Go's text/template in the helper process (./template-expander.ts). */
export interface Expander {
  expand(object: JsonObject, properties: readonly Readonly<Record<string, string>>[], names?: readonly string[]): Promise<ExpansionResult[]>;
}

export interface PropertyConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export interface DesiredSources {
  wdsName: string;
  transforms: Store<CustomTransform>;
  clusters: Store<ManagedCluster>;
  /** ConfigMaps of the ITS namespace customization-properties. */
  properties: Store<PropertyConfigMap>;
  templates?: Expander;
}

export interface Desired {
  works: Map<string, ManifestWork>;
  /** cluster → why the object cannot be expanded for it (each message names the cluster, as KubeStellar's do). */
  expansionErrors: Map<string, string[]>;
  /** cluster → why it cannot be wrapped for it. */
  wrapErrors: Map<string, string>;
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const RBAC_NOT_EXPANDED = `templates are not expanded in ${RBAC_GROUP} objects (annotation ${EXPAND_TEMPLATES_ANNOTATION}): `
  + 'what they grant was checked as written, by Kubernetes\' escalation rules; write each cluster\'s grant as its own object';

export const expandsTemplates = (o: SentObject): boolean => o.native.metadata.annotations?.[EXPAND_TEMPLATES_ANNOTATION] === 'true';

export async function desiredWorks(src: DesiredSources, found: SentObject, clusters: readonly string[], policies: readonly string[], createOnly: boolean, impliedNamespace: ReadonlySet<string> = new Set()): Promise<Desired> {
  const out: Desired = { works: new Map(), expansionErrors: new Map(), wrapErrors: new Map() };
  let manifest = stripServerFields(found.native, found.id);
  for (const t of src.transforms.list()) {
    if ((t.spec?.apiGroup ?? '') !== found.id.group || t.spec?.resource !== found.id.resource) continue;
    try {
      manifest = applyRemovals(manifest, t.spec?.remove ?? []);
    } catch (err) {
      // A CustomTransform that cannot be applied holds the object back everywhere, and says why.
      if (!(err instanceof WrapError)) throw err;
      for (const c of clusters) out.wrapErrors.set(c, `CustomTransform ${t.metadata.name}: ${err.message}`);
      return out;
    }
  }
  const contents = new Map<string, JsonObject>();
  if (!expandsTemplates(found)) {
    for (const c of clusters) contents.set(c, manifest);
  } else if (found.id.group === RBAC_GROUP) {
    // What an RBAC object grants was weighed as written, by Kubernetes' escalation check (the
    // view's, or the WDS's for a native write): a template could make it grant something else
    // (a roleRef or a rule expanded after the check), so RBAC objects are never expanded.
    for (const c of clusters) out.expansionErrors.set(c, [`${c}: ${RBAC_NOT_EXPANDED}`]);
  } else if (!src.templates) {
    for (const c of clusters) out.expansionErrors.set(c, [`${c}: template expansion needs the Go helper ksview-gotemplate, which this server runs without (--ksview-gotemplate)`]);
  } else {
    const props = clusters.map((name) => {
      const mc = src.clusters.get('', name);
      return templateProperties({ name, labels: mc?.metadata.labels, annotations: mc?.metadata.annotations }, src.properties.get(PROPERTIES_NAMESPACE, name));
    });
    // Template names as KubeStellar's: Go's messages then say `template: <cluster>/<Kind>(<ns>/<name>).<path>…`.
    const names = clusters.map((c) => templateName(c, found.native));
    let results: ExpansionResult[];
    try {
      results = await src.templates.expand(manifest, props, names);
    } catch (err) {
      results = clusters.map((c) => ({ error: `${c}: ${(err as Error).message}`, errors: [`${c}: ${(err as Error).message}`] }));
    }
    clusters.forEach((c, i) => {
      const r = results[i];
      if (r && 'object' in r) contents.set(c, r.object);
      else out.expansionErrors.set(c, r?.errors.length ? r.errors : [r?.error ?? `${c}: template expansion gave no answer`]);
    });
  }
  for (const [cluster, content] of contents) {
    try {
      out.works.set(cluster, manifestWork(content, { wds: src.wdsName, cluster, id: found.id, policies, createOnly, impliedNamespace: impliedNamespace.has(cluster) }));
    } catch (err) {
      if (!(err instanceof WrapError)) throw err;
      out.wrapErrors.set(cluster, err.message);
    }
  }
  return out;
}
