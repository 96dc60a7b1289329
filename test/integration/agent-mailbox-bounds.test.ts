// What a compromised cluster can store in the ITS is bounded by the ITS itself: an agent identity
// holding exactly the shipped RBAC (charts/kubestellar-view/files/agent/its-rbac.yaml) writes only
// its own Lease (by name), creates WorkStatuses only as far as the mailbox's ResourceQuota counts them
// (the chart's files/its/mailbox-quota.yaml), and every kind it writes there is refused past its
// size bound (manifests/its/mailbox-bounds.yaml, installed by serve): the Leases of 250 KB
// annotations and WorkStatuses of 1 MB statuses, an UpsyncedObject past 1,152 KiB, a work's status,
// a request's status or its ManagedCluster's status grown to 1 MB, forged managedFields; and what the
// agent itself writes at its largest is taken.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { boundedStatus } from '../../src/agent/status/workstatus.js';
import { chartFile } from '../../src/util/chart-files.js';
import { shippedAgent, managedClusterYaml } from '../fixtures/agent-identity.js';
import { kc, kcOk, uniqueName, waitUntil, type TapLike } from '../fixtures/spaces.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const refused = (r: { status: number; stderr: string }) => (r.status !== 0 ? r.stderr : undefined);
const MB = 'x'.repeat(1024 * 1024);
const WAIT = 60_000;

const lease = (ns: string, name: string, annotations?: Record<string, string>) => YAML.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
  metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) }, spec: { leaseDurationSeconds: 60 } });
const workStatus = (ns: string, name: string) => YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'WorkStatus',
  metadata: { name, namespace: ns }, spec: { sourceRef: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespace: 'app', name } } });

/** An agent of a cluster of the test's own, once the size bounds are in force (serve installs them; a new policy takes a moment). */
async function boundedAgent(t: TapLike, prefix: string) {
  const c = uniqueName(prefix);
  const agent = shippedAgent(t, c);
  await waitUntil('the mailbox bounds in force', () => /may write only the Lease managed-cluster-lease/.test(refused(kc('its1', [...agent.as, 'create', '--dry-run=server', '-f', '-'], lease(c, 'probe'))) ?? ''), WAIT, 500);
  const as = (args: string[], input?: string) => kc('its1', [...agent.as, ...args], input);
  // A patch of any size (an argument of kubectl is at most 128 KiB), from a file.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ksview-bounds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const patch = (args: string[], body: unknown) => {
    const file = path.join(dir, 'patch.json');
    writeFileSync(file, JSON.stringify(body));
    return as(['patch', ...args, '--type=merge', `--patch-file=${file}`]);
  };
  // A status written whole, as the agent does where it may not read the status (kubectl patch
  // --subresource=status reads it first): the object read by the hub admin, its status replaced.
  const putStatus = (args: string[], status: unknown) => {
    const file = path.join(dir, 'object.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(kcOk('its1', ['get', ...args, '-o', 'json'])) as Obj, status }));
    return as(['replace', '--subresource=status', '-f', file]);
  };
  return { c, flags: agent.as, as, patch, putStatus };
}

t.test('an agent writes only its own Lease, by name, and a small one: the issue\'s Leases of any name and 250 KB annotations are refused', async (t) => {
  const { c, flags, as, patch } = await boundedAgent(t, 'lease');
  t.match(refused(as(['create', '-f', '-'], lease(c, 'ten-of-these'))), /may write only the Lease managed-cluster-lease of its mailbox, not ten-of-these/, 'a Lease of another name: refused');
  kcOk('its1', ['create', '-f', '-'], lease(c, 'hub-owned'));
  t.match(refused(as(['-n', c, 'get', 'lease', 'hub-owned'])), /forbidden/i, 'another Lease of its mailbox: not even read');
  t.match(refused(as(['-n', c, 'annotate', 'lease', 'hub-owned', 'a=b'])), /forbidden/i, 'nor changed');
  t.match(refused(as(['-n', c, 'get', 'leases'])), /forbidden/i, 'Leases are not listed');

  kcOk('its1', [...flags, 'create', '-f', '-'], lease(c, 'managed-cluster-lease'));
  kcOk('its1', [...flags, '-n', c, 'patch', 'lease', 'managed-cluster-lease', '--type=merge', '-p', '{"spec":{"renewTime":"2025-01-01T00:00:00.000000Z"}}']);
  const big = patch(['-n', c, 'lease', 'managed-cluster-lease'], { metadata: { annotations: { big: 'y'.repeat(250_000) } } });
  t.match(refused(big), /may store at most 4096 bytes in leases managed-cluster-lease/, 'its own Lease with 250 KB of annotations: refused');
  const forged = JSON.parse(kcOk('its1', ['-n', c, 'get', 'lease', 'managed-cluster-lease', '-o', 'json'])) as Obj;
  forged.metadata.managedFields = [{ manager: 'forged', operation: 'Update', apiVersion: 'coordination.k8s.io/v1', fieldsType: 'FieldsV1',
    fieldsV1: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`f:padding-${'p'.repeat(100)}-${i}`, {}])) }];
  t.match(refused(as(['replace', '-f', '-'], JSON.stringify(forged))), /may store at most 4096 bytes/, 'managedFields written by the agent count too');
  t.notOk(JSON.parse(kcOk('its1', ['-n', c, 'get', 'lease', 'managed-cluster-lease', '-o', 'json'])).metadata.annotations?.big, 'nothing stored');
});

t.test('WorkStatuses are counted by the mailbox\'s quota, and one of a 1 MB status is refused; the agent\'s largest is taken', async (t) => {
  const { c, as, patch } = await boundedAgent(t, 'ws');
  const quota = readFileSync(chartFile('its/mailbox-quota.yaml'), 'utf8').replaceAll('CLUSTER_NAME', c).replaceAll('MAX_UPSYNCED_OBJECTS', '0').replaceAll('MAX_WORK_STATUSES', '2');
  kcOk('its1', ['apply', '-f', '-'], quota);
  const used = () => (JSON.parse(kcOk('its1', ['-n', c, 'get', 'resourcequota', 'kubestellar-view-mailbox', '-o', 'json'])) as Obj).status?.used?.['count/workstatuses.control.kubestellar.io'];
  await waitUntil('the quota counted', () => used() === '0', WAIT, 250);

  t.equal(as(['create', '-f', '-'], workStatus(c, 'one')).status, 0, 'a first WorkStatus');
  // A status of the agent's largest: what it makes of a WEC status of 60 KB, key-heavy (so that
  // managedFields, which list its keys, are as large as they can be).
  const wecStatus = Object.fromEntries(Array.from({ length: 750 }, (_, i) => [`k${String(i).padStart(4, '0')}-${'n'.repeat(40)}`, 'v'.repeat(30)]));
  const largest = boundedStatus(wecStatus).status;
  t.ok(JSON.stringify(largest).length > 23 * 1024, `the agent keeps ${JSON.stringify(largest).length} bytes of it`);
  const ok = patch(['-n', c, 'workstatus', 'one', '--subresource=status'], { status: largest });
  t.equal(ok.status, 0, `a status at the agent's own bound is taken ${ok.stderr.trim()}`);
  const huge = patch(['-n', c, 'workstatus', 'one', '--subresource=status'], { status: { blob: MB } });
  t.match(refused(huge), /may store at most 65536 bytes in workstatuses\/status one/, 'the issue\'s 1 MB status: refused');
  // Bytes, not characters: 20,000 four-byte characters are 80,000 bytes (a count of characters would take them).
  const wide = patch(['-n', c, 'workstatus', 'one', '--subresource=status'], { status: { blob: '\u{1F600}'.repeat(20_000) } });
  t.match(refused(wide), /may store at most 65536 bytes in workstatuses\/status one/, '20,000 four-byte characters (80 KB): refused');
  // (At create, kube drops the status of a kind with a status subresource: what else is written counts.)
  const padded = YAML.parse(workStatus(c, 'big')) as Obj;
  padded.metadata.annotations = { pad: 'p'.repeat(200 * 1024) };
  t.match(refused(as(['create', '-f', '-'], YAML.stringify(padded))), /may store at most 65536 bytes in workstatuses big/, 'a WorkStatus of 200 KB of annotations, at create: refused');

  t.equal(as(['create', '-f', '-'], workStatus(c, 'two')).status, 0, 'a second');
  await waitUntil('two counted', () => used() === '2', WAIT, 250);
  t.match(refused(as(['create', '-f', '-'], workStatus(c, 'three'))), /exceeded quota: kubestellar-view-mailbox.*count\/workstatuses\.control\.kubestellar\.io/, 'a third, past the quota: refused');
});

t.test('an UpsyncedObject past its bound, a request\'s, a work\'s or its ManagedCluster\'s status of 1 MB are refused; a work\'s spec is not the agent\'s', async (t) => {
  const { c, as, putStatus } = await boundedAgent(t, 'kinds');
  const copy = (name: string, data: string) => YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncedObject', metadata: { name, namespace: c },
    source: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'app', name, resourceVersion: '1' }, lastSeen: '2025-01-01T00:00:00Z',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'app' }, data: { d: data } } });
  t.equal(as(['create', '-f', '-'], copy('fits', 'z'.repeat(1000 * 1024))).status, 0, 'a copy of 1,000 KiB (serve\'s largest bound is 1 MiB) is taken');
  t.match(refused(as(['create', '-f', '-'], copy('too-big', 'z'.repeat(1200 * 1024)))), /may store at most 1179648 bytes in upsyncedobjects too-big/, 'one of 1,200 KiB: refused');

  kcOk('its1', ['create', '-f', '-'], YAML.stringify({ apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'UpsyncRequest', metadata: { name: 'req', namespace: c },
    spec: { wds: 'wds1', policy: 'p', clauses: [{ resources: ['configmaps'] }], maxObjects: 10, maxObjectBytes: 1024 } }));
  t.equal(putStatus(['-n', c, 'upsyncrequest', 'req'], { objects: 1, selected: 1 }).status, 0, 'a request\'s status is the agent\'s');
  t.match(refused(putStatus(['-n', c, 'upsyncrequest', 'req'], { message: MB })), /may store at most 32768 bytes in upsyncrequests\/status req/, 'of 1 MB: refused');

  kcOk('its1', ['create', '-f', '-'], YAML.stringify({ apiVersion: 'work.open-cluster-management.io/v1', kind: 'ManifestWork', metadata: { name: 'w', namespace: c },
    spec: { workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'app' }, data: { big: 'q'.repeat(200 * 1024) } }] } } }));
  const finalizer = as(['-n', c, 'patch', 'manifestwork', 'w', '--type=json', '-p', '[{"op":"add","path":"/metadata/finalizers","value":["cluster.open-cluster-management.io/manifest-work-cleanup"]}]']);
  t.equal(finalizer.status, 0, `the cleanup finalizer is the agent's to add ${finalizer.stderr.trim()}`);
  t.match(refused(as(['-n', c, 'annotate', 'manifestwork', 'w', `pad=${'a'.repeat(100)}`])), /may change only the finalizers of ManifestWork w/, 'annotations are not');
  t.match(refused(as(['-n', c, 'patch', 'manifestwork', 'w', '--type=merge', '-p', '{"spec":{"deleteOption":{"propagationPolicy":"Orphan"}}}'])), /may change only the finalizers/, 'nor the spec');
  const conditions = { conditions: [{ type: 'Applied', status: 'True', reason: 'AppliedManifestWorkComplete', message: 'Apply manifest work complete', lastTransitionTime: '2025-01-01T00:00:00Z' }] };
  t.equal(putStatus(['-n', c, 'manifestwork', 'w'], conditions).status, 0, 'a work\'s status is the agent\'s (the work\'s 200 KiB spec is the hub\'s, not counted)');
  const bloated = { conditions: [{ ...conditions.conditions[0], message: 'm'.repeat(32768) }, { ...conditions.conditions[0], type: 'Padding', message: 'm'.repeat(32768) }] };
  t.match(refused(putStatus(['-n', c, 'manifestwork', 'w'], bloated)), /may store at most 20480 bytes in manifestworks\/status w/, 'past 16 KiB + 4 KiB for its one manifest: refused');

  kcOk('its1', ['create', '-f', '-'], managedClusterYaml(c, { hubAcceptsClient: true }));
  t.equal(putStatus(['managedcluster', c], { version: { kubernetes: 'v1.33.0' } }).status, 0, 'its ManagedCluster\'s status is the agent\'s');
  const claims = { clusterClaims: Array.from({ length: 1000 }, (_, i) => ({ name: `claim-${i}.example.com`, value: 'c'.repeat(1000) })) };
  t.match(refused(putStatus(['managedcluster', c], claims)), /may store at most 65536 bytes in managedclusters\/status/, '1 MB of cluster claims (each as long as OCM\'s CRD lets it be): refused');
});
