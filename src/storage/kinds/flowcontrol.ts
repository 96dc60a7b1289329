// What the kinds of API priority and fairness (flowcontrol.apiserver.k8s.io) share: the objects
// kube-apiserver maintains itself (annotation apf.kubernetes.io/autoupdate-spec) are the WDS's own
// and never sent when written natively.
import type { KubeObject } from '../../kube/objects.js';

export const FLOWCONTROL = 'flowcontrol.apiserver.k8s.io';
const APF_AUTOUPDATE = 'apf.kubernetes.io/autoupdate-spec';

export const maintainedByKubeApiserver = (o: KubeObject, direct: boolean): boolean =>
  direct && o.metadata?.annotations?.[APF_AUTOUPDATE] !== undefined;
