// A reference to a ServiceAccount by namespace and name (an executor of works: docs/placement.md, "Executor"), validated
// as kube validates a namespace name (DNS-1123 label) and a ServiceAccount name (DNS-1123
// subdomain), with kube's field-error words; and its `NAMESPACE/NAME` spelling on command lines.
import { dns1123SubdomainErrors, isDNS1123Label } from './names.js';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** Why `ref` names no ServiceAccount kube would accept (a namespace is an RFC 1123 label, a ServiceAccount's name a subdomain) (field paths under `path`), or [] when it does. */
export function serviceAccountRefErrors(ref: unknown, path: string): string[] {
  const r = (typeof ref === 'object' && ref !== null ? ref : {}) as Record<string, unknown>;
  const out: string[] = [];
  const ns = r.namespace;
  if (typeof ns !== 'string' || ns === '') out.push(`${path}.namespace: Required value`);
  else if (!isDNS1123Label(ns)) out.push(`${path}.namespace: Invalid value: "${ns.slice(0, 80)}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character, at most 63 characters`);
  const name = r.name;
  if (typeof name !== 'string' || name === '') out.push(`${path}.name: Required value`);
  else {
    const errs = dns1123SubdomainErrors(name);
    if (errs.length > 0) out.push(`${path}.name: Invalid value: "${name.slice(0, 80)}": ${errs.join(', ')}`);
  }
  return out;
}

/** Parses `NS/NAME` (the --default-executor flag); throws an Error with a one-line message when invalid. */
export function parseServiceAccountRef(text: string): ServiceAccountRef {
  const parts = text.split('/');
  if (parts.length !== 2) throw new Error(`"${text}" has no single "/" between the namespace and the name`);
  const ref = { namespace: parts[0]!, name: parts[1]! };
  const errs = serviceAccountRefErrors(ref, 'serviceAccount');
  if (errs.length > 0) throw new Error(errs[0]);
  return ref;
}
