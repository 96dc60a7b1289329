// Which of the objects an UpsyncRequest's clauses select its executor may read (pure; the answers
// come from ./read-rights.ts): downsync applies a policy's works as its executor, so the WEC's RBAC
// decides what the policy may write; upsync copies a policy's objects only when that executor may
// `get` them, so it decides what the policy may read too.
// - No executor in the request: every selected object (the agent's own rights, as a work without
//   executor is applied).
// - An executor: an object whose answer is yes is readable, no is left out (and its copy, if any,
//   deleted), not known yet is undecided: not copied, and an existing copy left as it is until
//   the answer comes.
// - A malformed executor (serve writes a checked one; the ITS's CRD checks it too): nothing is
//   readable — never a fallback to the agent's own rights.
import { serviceAccountRefErrors, type ServiceAccountRef } from '../../kube/service-account-ref.js';
import type { UpsyncRequest } from '../../kube/upsync-api.js';
import type { Mapping } from '../shared/rest-mapper.js';
import type { ReadAccess } from './read-rights.js';
import { nsOf, type Candidate } from './select.js';

export interface Authorized<T extends { cand: Candidate; mapping: Mapping }> {
  readable: T[];
  /** Left out: the executor may not read them (or it is malformed). */
  denied: number;
  /** Not known yet. */
  undecided: T[];
  /** Why objects were left out or held, for the request's status ('' when none were). */
  message: string;
}

const objects = (n: number) => `${n} object${n === 1 ? '' : 's'}`;

export function authorize<T extends { cand: Candidate; mapping: Mapping }>(req: UpsyncRequest, selected: readonly T[], mayRead: ReadAccess): Authorized<T> {
  const raw = req.spec.executor as unknown;
  if (raw === undefined || raw === null) return { readable: [...selected], denied: 0, undecided: [], message: '' };
  const errors = serviceAccountRefErrors(raw, 'spec.executor');
  if (errors.length > 0) {
    return { readable: [], denied: selected.length, undecided: [], message: `the request's executor is refused (${errors[0]}): nothing is upsynced with the agent's own rights` };
  }
  const ex = raw as ServiceAccountRef;
  const readable: T[] = [];
  const undecided: T[] = [];
  let denied = 0;
  for (const s of selected) {
    const ok = mayRead(ex, s.mapping, s.mapping.namespaced ? nsOf(s.cand.obj) : '');
    if (ok === true) readable.push(s);
    else if (ok === false) denied++;
    else undecided.push(s);
  }
  const who = `${ex.namespace}/${ex.name}`;
  const parts: string[] = [];
  if (denied > 0) parts.push(`${objects(denied)} the executor ${who} may not read ${denied === 1 ? 'was' : 'were'} left out`);
  if (undecided.length > 0) parts.push(`${objects(undecided.length)} not yet authorized for the executor ${who}`);
  return { readable, denied, undecided, message: parts.join('; ') };
}
