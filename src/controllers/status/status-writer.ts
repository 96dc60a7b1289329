// Writes a returned state into the WDS object, only what differs from the cached object: the
// label and annotation by a merge patch of the object, .status by a JSON patch that replaces it,
// on the status subresource when the resource has one (else on the object, as KubeStellar does).
// Order keeps the annotation a true record of what was returned: it is set before a status is
// returned and removed after the status is cleared, so a crash in between never leaves a returned
// status unmarked (which would never be cleared). A 404 (the object went) or 409 (it changed:
// the informer brings the new one and the key comes back) ends the write quietly. A write the WDS
// refuses for its content (400, 413, 422: the same content would be refused again) is a
// WriteRefused with the WDS's message, which the caller reports instead of retrying.
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject, KubeObject } from '../../kube/objects.js';
import { objectPath } from '../../kube/resource-path.js';
import { expectOk, upstreamRequest, type Upstream } from '../../kube/upstream.js';
import { EXECUTING_COUNT_LABEL, RETURNED_FROM_ANNOTATION } from '../model/marks.js';
import type { StoredObject } from '../model/sent.js';
import type { ReturnedState } from './returned-state.js';

export const STATUS_FIELD_MANAGER = 'kubestellar-view-status';

/** The WDS refused what was written, for what it is (its Status message). */
export class WriteRefused extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = 'WriteRefused';
  }
}


/** Writes what differs; returns the writes made (for logs and tests). */
export async function writeReturnedState(wds: Upstream, target: StoredObject, want: ReturnedState): Promise<string[]> {
  const { res, obj } = target;
  const path = objectPath({ ...res, namespace: res.namespaced ? obj.metadata?.namespace ?? '' : '', name: obj.metadata?.name ?? '' });
  const labels = obj.metadata?.labels ?? {};
  const annotations = obj.metadata?.annotations ?? {};
  const metaPatch: JsonObject = {};
  if (labels[EXECUTING_COUNT_LABEL] !== want.executingCount) metaPatch.labels = { [EXECUTING_COUNT_LABEL]: want.executingCount ?? null };
  if (annotations[RETURNED_FROM_ANNOTATION] !== want.returnedFrom) metaPatch.annotations = { [RETURNED_FROM_ANNOTATION]: want.returnedFrom ?? null };
  const statusChanges = want.status !== undefined && !isDeepStrictEqual(obj.status ?? {}, want.status);
  const done: string[] = [];
  // The metadata patch is conditional on the resourceVersion last seen: ours after a status write.
  let resourceVersion = obj.metadata?.resourceVersion;
  const patchMeta = async () => {
    if (Object.keys(metaPatch).length === 0) return true;
    const written = await send(wds, 'PATCH', path, 'application/merge-patch+json', { metadata: { ...metaPatch, resourceVersion } });
    if (written) done.push(`metadata ${JSON.stringify(metaPatch)}`);
    return written !== undefined;
  };
  const patchStatus = async () => {
    if (!statusChanges) return true;
    const written = await send(wds, 'PATCH', res.hasStatus ? `${path}/status` : path, 'application/json-patch+json', [{ op: 'add', path: '/status', value: want.status }]);
    if (!written) return false;
    resourceVersion = written.metadata?.resourceVersion ?? resourceVersion;
    done.push(want.returnedFrom ? `status from ${want.returnedFrom}` : 'status cleared');
    return true;
  };
  if (want.returnedFrom !== undefined) {
    if (await patchMeta()) await patchStatus();
  } else if (await patchStatus()) {
    await patchMeta();
  }
  return done;
}

/** The object as written; undefined when it went or changed under us (404, 409: the informer queues it again). */
async function send(wds: Upstream, method: string, path: string, contentType: string, body: unknown): Promise<KubeObject | undefined> {
  const sent = await upstreamRequest(wds, method, `${path}?fieldManager=${STATUS_FIELD_MANAGER}`, { headers: { 'content-type': contentType }, body });
  if (sent.status === 400 || sent.status === 413 || sent.status === 422) {
    const text = sent.body.toString('utf8');
    let message = text;
    try {
      message = String((JSON.parse(text) as { message?: unknown }).message ?? text);
    } catch { /* not a Status: its text */ }
    message = message.slice(0, 1000);
    throw new WriteRefused(sent.status, `${method} ${path}: ${sent.status} ${message}`);
  }
  const res = expectOk(sent, `${method} ${path}`, [404, 409]);
  if (res.status === 404 || res.status === 409) return undefined;
  return JSON.parse(res.body.toString('utf8') || '{}') as KubeObject;
}
