// KubeStellar's template expansion (annotation control.kubestellar.io/expand-templates: "true"),
// evaluated by Go's own text/template in the helper ksview-gotemplate
// (build/kubernetes/ksview-gotemplate), one long-lived child process spoken to in frames
// (src/kube/framed-process.ts). As in KubeStellar's transport controller (pkg/customize): every
// leaf string holding "{{" — never a map key — is parsed as a template named after its place in
// the object and run with Option("missingkey=error") and the destination's properties; the
// messages are Go's own, e.g. `template: $.spec.url:1:10: executing "$.spec.url" at
// <.clusterHash>: map has no entry for key "clusterHash"`.
//
// Bounded, as whoever may write the object writes its templates: one destination's expansions
// together may write at most OCM's 500 KiB (more could never be sent in a ManifestWork), which the
// helper enforces by stopping the template as it passes the limit, and its builtins may build at
// most 4 times that, written or not (a printf width is refused before it is built); one object's
// expansion, for all its destinations, may take at most 2 s, which the helper checks at every range
// iteration and template call (each request says how long the object's earlier ones took); an
// answer frame holds at most 16 MiB, so destinations are asked for in batches that fit, and a
// bigger frame is refused unread (src/kube/framed-process.ts). An object over a bound is an
// expansion error of that destination (`template: <name>: the object's expansion is over the
// limit of 512000 bytes`, `… took over 2000 ms`), reported on the policy's status like any other;
// the helper goes on serving the next request.
//
// templateProperties() gathers a destination's properties from KubeStellar's four sources.
// Which objects are expanded, and what an error does to propagation, is the caller's.
import { existsSync } from 'node:fs';
import { FramedProcess } from '../../kube/framed-process.js';
import type { JsonObject } from '../../kube/objects.js';
import { MAX_MANIFESTS_BYTES } from '../model/wrapping.js';

/** One destination's outcome: the expanded object, or Go's messages (the first, and all in document order). */
export type ExpansionResult = { object: JsonObject } | { error: string; errors: string[] };

// A helper busy longer than this with one request is killed and restarted: the last resort, as
// the helper stops an object's expansion itself after `millis` (2 s).
const DEFAULT_TIMEOUT_MS = 20_000;

/** The helper's bounds (it refuses to raise them: 500 KiB, 16 MiB and 2 s are its own maxima). */
export interface ExpansionLimits {
  /** One destination's expanded object, in bytes. */
  object: number;
  /** One answer frame, in bytes. */
  answer: number;
  /** One object's expansion for all its destinations, in ms. */
  millis: number;
}

export const DEFAULT_EXPANSION_LIMITS: ExpansionLimits = { object: MAX_MANIFESTS_BYTES, answer: 16 << 20, millis: 2000 };

/** What the helper keeps of one destination's messages (its maxMessages), and a result's own JSON. */
const MESSAGES_BYTES = 64 << 10;
const RESULT_OVERHEAD = 1024;

export class TemplateExpander {
  private readonly helper: FramedProcess;
  private readonly limits: ExpansionLimits;
  /** Destinations per request: as many as fit in an answer at their largest. */
  private readonly batch: number;

  constructor(private readonly binary: string, opts: { timeoutMs?: number; limits?: ExpansionLimits } = {}) {
    this.limits = opts.limits ?? DEFAULT_EXPANSION_LIMITS;
    this.batch = Math.max(1, Math.floor(this.limits.answer / (this.limits.object + MESSAGES_BYTES + RESULT_OVERHEAD)));
    this.helper = new FramedProcess(binary, {
      name: 'ksview-gotemplate', timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      // The helper never answers more; a longer frame is not read at all.
      maxAnswerBytes: this.limits.answer,
    });
  }

  /**
   * Expands `object` once per property map, answers in the same order. `names` (one per property
   * map) is each destination's template-name root, which starts every message; the default is
   * "$" (messages then name JSON paths such as $.spec.outputs[0].url); KubeStellar's own is
   * templateName(cluster, object). Rejects (a plain Error) when the helper is missing or fails.
   */
  async expand(object: JsonObject, properties: readonly Readonly<Record<string, string>>[], names?: readonly string[]): Promise<ExpansionResult[]> {
    if (names && names.length !== properties.length) throw new Error(`${names.length} template names for ${properties.length} destinations`);
    if (properties.length === 0) return [];
    if (!existsSync(this.binary)) {
      throw new Error(`the template helper ksview-gotemplate is missing: ${this.binary} (it is built with the spaces' binaries; see charts/kubestellar-view/README.md)`);
    }
    const out: ExpansionResult[] = [];
    // The object's time limit is for all its batches: each says how long the earlier ones took
    // (as the helper measured it: the time spent waiting behind other objects is not counted).
    let spentMillis = 0;
    for (let i = 0; i < properties.length; i += this.batch) {
      const some = properties.slice(i, i + this.batch);
      const answer = await this.helper.requestJson<{ results?: ExpansionResult[]; error?: string; millis?: number }>({
        object, properties: some, ...(names ? { names: names.slice(i, i + this.batch) } : {}), limits: this.limits, spentMillis,
      });
      if (answer.error !== undefined) throw new Error(`ksview-gotemplate: ${answer.error}`);
      if (answer.results?.length !== some.length) throw new Error(`ksview-gotemplate answered ${answer.results?.length ?? 'no'} results for ${some.length} destinations`);
      out.push(...answer.results);
      spentMillis += typeof answer.millis === 'number' ? answer.millis : 0;
    }
    return out;
  }

  close(): void {
    this.helper.close();
  }
}

/**
 * KubeStellar's template-name root for an object sent to a cluster:
 * `<cluster>/<Kind>[.<group>](<namespace>/<name>)` (its util.RefToRuntimeObj, namespace omitted
 * for cluster-scoped objects).
 */
export function templateName(clusterName: string, object: { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } }): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const name = typeof object.metadata?.name === 'string' ? object.metadata.name : '';
  const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : '';
  return `${clusterName}/${group ? `${kind}.${group}` : kind}(${namespace ? `${namespace}/` : ''}${name})`;
}

// Go's keywords, which go/token.IsIdentifier (what KubeStellar uses) refuses.
const GO_KEYWORDS = new Set([
  'break', 'case', 'chan', 'const', 'continue', 'default', 'defer', 'else', 'fallthrough', 'for', 'func', 'go', 'goto',
  'if', 'import', 'interface', 'map', 'package', 'range', 'return', 'select', 'struct', 'switch', 'type', 'var',
]);

/** A Go identifier (the Go spec: a Unicode letter or "_", then letters, decimal digits, "_"), not a keyword. */
export function isGoIdentifier(s: string): boolean {
  return /^[\p{L}_][\p{L}\p{Nd}_]*$/u.test(s) && !GO_KEYWORDS.has(s);
}

/**
 * A destination's properties, from KubeStellar's four sources in decreasing precedence: the
 * ConfigMap named like the inventory object in the ITS namespace customization-properties (its
 * data, and its binaryData decoded to the bytes' text, as KubeStellar's string(bytes)), the
 * inventory object's annotations, its labels, then clusterName (the inventory object's name).
 * Only keys that are Go identifiers count.
 */
export function templateProperties(
  cluster: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> },
  configMap?: { data?: Record<string, string>; binaryData?: Record<string, string> },
): Record<string, string> {
  // A Map, so that a key such as __proto__ is a property like any other.
  const props = new Map<string, string>([['clusterName', cluster.name]]);
  const add = (entries: Record<string, string> | undefined, decode: (v: string) => string = (v) => v) => {
    for (const [k, v] of Object.entries(entries ?? {})) {
      if (isGoIdentifier(k) && typeof v === 'string') props.set(k, decode(v));
    }
  };
  add(cluster.labels);
  add(cluster.annotations);
  add(configMap?.data);
  add(configMap?.binaryData, (v) => Buffer.from(v, 'base64').toString('utf8'));
  return Object.fromEntries(props);
}
