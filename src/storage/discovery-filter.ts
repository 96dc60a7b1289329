// Discovery documents of the WDS as the view shows them: hidden resources, and groups left with
// nothing visible, removed; everything else unchanged. Pure functions over the JSON documents
// (legacy APIGroupList/APIResourceList and aggregated APIGroupDiscoveryList v2/v2beta1).
import type { AggregatedDiscovery, AggregatedGroup, AggregatedVersion } from '../kube/discovery.js';
import type { KindCategories } from './kind-categories.js';

export function filterAggregatedDiscovery(doc: AggregatedDiscovery, cats: KindCategories): AggregatedDiscovery {
  const items: AggregatedGroup[] = [];
  for (const g of doc.items ?? []) {
    const group = g.metadata?.name ?? '';
    if (cats.isHiddenGroup(group)) continue;
    const versions: AggregatedVersion[] = [];
    for (const v of g.versions ?? []) {
      const all = v.resources ?? [];
      const resources = all.filter((r) => cats.categorize({ group, resource: r.resource }) !== 'hidden');
      if (all.length > 0 && resources.length === 0) continue;
      versions.push({ ...v, resources });
    }
    if ((g.versions ?? []).length > 0 && versions.length === 0) continue;
    items.push({ ...g, versions });
  }
  return { ...doc, items };
}

/** "group/version" of every version the filtered aggregated documents keep ("v1" for core). */
export function visibleGroupVersions(docs: AggregatedDiscovery[]): Set<string> {
  const out = new Set<string>();
  for (const doc of docs) {
    for (const g of doc.items ?? []) {
      const group = g.metadata?.name ?? '';
      for (const v of g.versions ?? []) out.add(group ? `${group}/${v.version}` : v.version);
    }
  }
  return out;
}

interface GroupList {
  groups?: Array<{ name: string; versions?: Array<{ groupVersion: string; version: string }>; preferredVersion?: { groupVersion: string; version: string }; [k: string]: unknown }>;
  [k: string]: unknown;
}

/** Legacy /apis: only groups (and versions) that stay visible. */
export function filterGroupList(doc: GroupList, visible: Set<string>): GroupList {
  const groups = [];
  for (const g of doc.groups ?? []) {
    const versions = (g.versions ?? []).filter((v) => visible.has(v.groupVersion));
    if (versions.length === 0) continue;
    const preferred = g.preferredVersion && visible.has(g.preferredVersion.groupVersion) ? g.preferredVersion : versions[0];
    groups.push({ ...g, versions, preferredVersion: preferred });
  }
  return { ...doc, groups };
}

interface ResourceList {
  groupVersion?: string;
  resources?: Array<{ name: string; [k: string]: unknown }>;
  [k: string]: unknown;
}

/** Legacy /api/v1 or /apis/<g>/<v>: hidden resources (and their subresources) removed. */
export function filterResourceList(doc: ResourceList, group: string, cats: KindCategories): ResourceList {
  return { ...doc, resources: (doc.resources ?? []).filter((r) => cats.categorize({ group, resource: r.name }) !== 'hidden') };
}
