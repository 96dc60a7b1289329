// PLACEHOLDER until the Go helper's client lands (helper branch `ha` replaces this file).
import type { JsonObject } from '../kube/objects.js';

export class TemplateExpander {
  constructor(private readonly binary: string) {}
  expand(_object: JsonObject, _properties: readonly Readonly<Record<string, string>>[]): Promise<Array<{ object: JsonObject } | { error: string }>> {
    return Promise.reject(new Error(`template helper ${this.binary} is not available`));
  }
  close(): void {}
}

export function templateProperties(cluster: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> },
  configMap?: { data?: Record<string, string>; binaryData?: Record<string, string> }): Record<string, string> {
  const ident = /^[\p{L}_][\p{L}\p{Nd}_]*$/u;
  const props: Record<string, string> = { clusterName: cluster.name };
  for (const source of [cluster.labels ?? {}, cluster.annotations ?? {}, configMap?.data ?? {}]) {
    for (const [k, v] of Object.entries(source)) if (ident.test(k)) props[k] = v;
  }
  return props;
}
