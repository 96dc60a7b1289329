// What a bundled work is made of (./bundles.ts decides which objects go in which): the member of
// one object (its manifest as ../model/wrapping.ts makes it for one object, its manifestConfig, its
// orphaning rule, its source and generation), the slot (a work of a bundle group in one cluster)
// and the work a slot's members make — the same members make the same work — or that a stored
// bundle is made of (pure).
import { Buffer } from 'node:buffer';
import type { JsonObject } from '../../kube/objects.js';
import type { DeleteOption, ManifestConfigOption } from '../../kube/ocm-api.js';
import { SOURCE_GENERATION_ANNOTATION, SOURCE_GENERATIONS_ANNOTATION } from '../../kube/ocm-api.js';
import { BUNDLE_ANNOTATION, bundleGroup, SOURCES_ANNOTATION, WDS_LABEL, type ManifestWork } from '../model/wrapping.js';
import { SOURCE_ANNOTATION } from '../model/keys.js';
import { objectIndexKey, sourcesOf } from './works.js';

type OrphaningRule = NonNullable<NonNullable<DeleteOption['selectivelyOrphans']>['orphaningRules']>[number];

/** One object's manifest in a bundle. */
export interface Member {
  key: string;
  source: string;
  generation: number | undefined;
  manifest: JsonObject;
  config: ManifestConfigOption;
  orphan: OrphaningRule | undefined;
  bytes: number;
}

/** One work of a bundle group in one cluster. */
export interface Slot {
  cluster: string;
  name: string;
  index: number;
  group: string;
  labels: Record<string, string>;
  executor: JsonObject | undefined;
  members: Map<string, Member>;
  /**
   * Members moving to another slot whose work is not written with them yet: still written here, so
   * a write of this slot by another object's reconcile never releases them before they are received.
   */
  leaving: Map<string, Member>;
  /** Bumped on every change of what the slot's work holds; `written`: the version the ITS has. */
  version: number;
  written: number;
  /** Read from the ITS (or known not to be there), so what it held is known. */
  known: boolean;
}

const bytesOf = new WeakMap<JsonObject, number>();
function sizeOf(manifest: JsonObject): number {
  let n = bytesOf.get(manifest);
  if (n === undefined) {
    n = Buffer.byteLength(JSON.stringify(manifest));
    bytesOf.set(manifest, n);
  }
  return n;
}

/** The member of a work of one object (as ../model/wrapping.ts manifestWork makes it), and its group. */
export function memberOf(work: ManifestWork): { member: Member; group: string } {
  const manifest = work.spec!.workload!.manifests![0] as JsonObject;
  const config = work.spec!.manifestConfigs![0]!;
  const generation = Number(work.metadata.annotations?.[SOURCE_GENERATION_ANNOTATION]);
  return {
    group: bundleGroup(work.metadata.labels ?? {}, work.spec?.executor),
    member: {
      key: objectIndexKey(config.resourceIdentifier),
      source: work.metadata.annotations?.[SOURCE_ANNOTATION] ?? '',
      generation: Number.isSafeInteger(generation) ? generation : undefined,
      manifest, config,
      orphan: work.spec?.deleteOption?.selectivelyOrphans?.orphaningRules?.[0],
      bytes: sizeOf(manifest),
    },
  };
}

/** The members of a bundled work read from the ITS. */
export function membersOfStored(w: ManifestWork): Member[] {
  const sources = sourcesOf(w);
  let generations: unknown;
  try {
    generations = JSON.parse(w.metadata.annotations?.[SOURCE_GENERATIONS_ANNOTATION] ?? '[]');
  } catch {
    generations = [];
  }
  const manifests = (w.spec?.workload?.manifests ?? []) as JsonObject[];
  const rules = w.spec?.deleteOption?.selectivelyOrphans?.orphaningRules ?? [];
  return manifests.flatMap((manifest, i): Member[] => {
    const config = w.spec?.manifestConfigs?.[i];
    if (!config) return [];
    const key = objectIndexKey(config.resourceIdentifier);
    const g = Array.isArray(generations) ? Number(generations[i]) : NaN;
    return [{
      key, manifest, config,
      source: sources[i] ?? '',
      generation: Number.isSafeInteger(g) && g > 0 ? g : undefined,
      orphan: rules.find((r) => objectIndexKey(r) === key),
      bytes: sizeOf(manifest),
    }];
  });
}

/** The work a slot's members make (members in key order: the same members make the same work). */
export function slotWork(wds: string, slot: Slot): ManifestWork {
  const members = [...slot.leaving.values(), ...slot.members.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const orphans = members.flatMap((m) => (m.orphan ? [m.orphan] : []));
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: {
      name: slot.name, namespace: slot.cluster, labels: { ...slot.labels, [WDS_LABEL]: wds },
      annotations: {
        [BUNDLE_ANNOTATION]: slot.group,
        [SOURCES_ANNOTATION]: JSON.stringify(members.map((m) => m.source)),
        [SOURCE_GENERATIONS_ANNOTATION]: JSON.stringify(members.map((m) => m.generation ?? null)),
      },
    },
    spec: {
      workload: { manifests: members.map((m) => m.manifest) },
      manifestConfigs: members.map((m) => m.config),
      ...(orphans.length > 0 ? { deleteOption: { propagationPolicy: 'SelectivelyOrphan', selectivelyOrphans: { orphaningRules: orphans } } } : {}),
      ...(slot.executor ? { executor: slot.executor } : {}),
    },
  };
}

/** The bundled work of slot `name` in a cluster carrying these works' objects, as placement writes it (tests, peers). */
export function bundledWork(wds: string, cluster: string, name: string, works: readonly ManifestWork[]): ManifestWork {
  const members = works.map((w) => memberOf(w));
  const first = works[0]!;
  const slot: Slot = {
    cluster, name, index: 0, group: members[0]!.group, ...shapeOf(first), leaving: new Map(), version: 0, written: 0, known: true,
    members: new Map(members.map(({ member }) => [member.key, member])),
  };
  return slotWork(wds, slot);
}

/** What a member writes (a change of it is a change of its slot's work). */
export function fingerprint(m: Member | undefined): string {
  return m ? JSON.stringify([m.source, m.generation ?? null, m.config, m.orphan ?? null, m.manifest]) : '';
}

/** What a new slot's work is labelled and executed with: that of the work of the object that opens it. */
export type SlotShape = Pick<Slot, 'labels' | 'executor'>;
export function shapeOf(work: ManifestWork): SlotShape {
  return { labels: Object.fromEntries(Object.entries(work.metadata.labels ?? {}).filter(([l]) => l !== WDS_LABEL)), executor: work.spec?.executor };
}
