// The group view.kubestellar.io as kube-apiserver aggregates it (discovery, OpenAPI listing only
// this group), the view's own discovery and OpenAPI (WDS's minus hidden kinds, URLs under the view
// root), health and metrics endpoints.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import t from 'tap';
import { ksview } from '../fixtures/ksview.js';
import { kc, kcOk, layout } from '../fixtures/spaces.js';
import { testSpacesOptions } from '../fixtures/spaces-options.js';

// kubectl get --raw takes a path on the host, not under the context's server URL.
const VIEW = 'wds1-view';
const root = '/apis/view.kubestellar.io/v1alpha1/spaces/wds1/proxy';
const wds = layout.spaces.find((s) => s.name === 'wds1')!;
const pki = (f: string) => readFileSync(path.join(wds.dir, 'pki', f));

function direct(p: string, withCert = true, accept = 'application/json'): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: layout.viewServerPort, path: p, rejectUnauthorized: false, headers: { accept },
      ...(withCert ? { cert: pki('admin.crt'), key: pki('admin.key') } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    }).on('error', reject);
  });
}

t.test('kube-apiserver aggregates the group: discovery and OpenAPI', async (t) => {
  const resources = kcOk('wds1', ['api-resources', '--api-group=view.kubestellar.io', '-o', 'wide']);
  t.match(resources, /^spaces\s+view\.kubestellar\.io\/v1alpha1\s+false\s+Space\s+get,list,watch/m);
  const legacy = JSON.parse(kcOk('wds1', ['get', '--raw', '/apis/view.kubestellar.io/v1alpha1']));
  t.same(legacy.resources.map((r: { name: string }) => r.name), ['spaces', 'spaces/proxy', 'bindings', 'combinedstatuses', 'upsyncedobjects']);
  t.match(kcOk('wds1', ['explain', 'combinedstatuses.view.kubestellar.io.results.rows.columns']), /float/, 'kubectl explain of a CombinedStatus');
  const index = JSON.parse(kcOk('wds1', ['get', '--raw', '/openapi/v3']));
  t.ok(index.paths['apis/view.kubestellar.io/v1alpha1'], 'the WDS lists the group in /openapi/v3');
  t.match(kcOk('wds1', ['explain', 'spaces.view.kubestellar.io.status']), /viewURL/);
  const own = JSON.parse((await direct('/openapi/v3')).body);
  t.same(Object.keys(own.paths), ['apis/view.kubestellar.io/v1alpha1'], 'the server lists only its own group');
  const v2 = JSON.parse((await direct('/openapi/v2')).body);
  t.same(Object.keys(v2.paths).filter((p) => !p.startsWith('/apis/view.kubestellar.io/')), [], 'OpenAPI v2: only this group\'s paths');
  const agg = await direct('/apis', true, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json');
  t.equal(agg.type, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  const aggDoc = JSON.parse(agg.body);
  t.equal(aggDoc.kind, 'APIGroupDiscoveryList');
  t.same(aggDoc.items[0].versions[0].resources[0].responseKind, { group: 'view.kubestellar.io', version: 'v1alpha1', kind: 'Space' });
});

t.test('the view\'s discovery and OpenAPI are the WDS\'s minus hidden kinds', async (t) => {
  const wdsV2 = JSON.parse(kcOk('wds1', ['get', '--raw', '/openapi/v2']));
  const viewV2 = JSON.parse(kcOk(VIEW, ['get', '--raw', `${root}/openapi/v2`]));
  t.ok(wdsV2.definitions['io.k8s.api.core.v1.Event'], 'the WDS defines Event');
  t.notOk(viewV2.definitions['io.k8s.api.core.v1.Event'], 'the view does not');
  t.notOk(viewV2.definitions['io.k8s.api.core.v1.Node'], 'nor Node');
  t.ok(viewV2.definitions['io.k8s.api.core.v1.ConfigMap'], 'ConfigMap stays');
  t.ok(viewV2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'], 'shared schemas stay');
  t.same(Object.keys(viewV2.paths).filter((p) => /\/(events|nodes|leases)(\/|$)/.test(p)), [], 'no path to a hidden kind');
  t.ok(Object.keys(viewV2.paths).includes('/api/v1/namespaces/{namespace}/configmaps'));

  const index = JSON.parse(kcOk(VIEW, ['get', '--raw', `${root}/openapi/v3`]));
  t.notOk(index.paths['apis/coordination.k8s.io/v1'], 'a group with only hidden kinds is gone');
  t.notOk(index.paths['apis/denatured.kubestellar.io/v1alpha1'], 'kubestellar groups of the WDS are gone');
  // view.kubestellar.io is the view's own there (UpsyncedObjects only), not the WDS's aggregated group.
  const ownView = index.paths['apis/view.kubestellar.io/v1alpha1'].serverRelativeURL as string;
  t.match(ownView, new RegExp(`^${root}/openapi/v3/apis/view.kubestellar.io/v1alpha1\\?hash=`), 'view.kubestellar.io: the view\'s own document');
  const resources = new Set(Object.keys(JSON.parse(kcOk(VIEW, ['get', '--raw', ownView])).paths).map((p) => p.split('/')[p.includes('{name}') ? p.split('/').length - 2 : p.split('/').length - 1]));
  t.same([...resources], ['upsyncedobjects'], 'with the UpsyncedObjects only, none of the WDS\'s resources of that group');
  t.match(index.paths['apis/apps/v1'].serverRelativeURL, new RegExp(`^${root}/openapi/v3/apis/apps/v1\\?hash=`), 'URLs under the view root');
  const core = JSON.parse(kcOk(VIEW, ['get', '--raw', `${root}/openapi/v3/api/v1`]));
  t.notOk(core.components.schemas['io.k8s.api.core.v1.Node']);
  t.ok(core.components.schemas['io.k8s.api.core.v1.ConfigMap']);

  const aggregated = await direct(`${root}/apis`, true, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json');
  t.equal(aggregated.type, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'aggregated discovery of the view, exact Content-Type');
  type AggregatedGroup = { metadata: { name: string }; versions: { resources: { resource: string }[] }[] };
  const aggregatedItems = JSON.parse(aggregated.body).items as AggregatedGroup[];
  const aggregatedGroups = aggregatedItems.map((g) => g.metadata.name);
  t.ok(aggregatedGroups.includes('apps') && !aggregatedGroups.includes('coordination.k8s.io'));
  t.same(aggregatedItems.find((g) => g.metadata.name === 'view.kubestellar.io')?.versions.flatMap((v) => v.resources.map((r) => r.resource)), ['upsyncedobjects'],
    'of view.kubestellar.io the view serves only the fleet\'s upsynced objects (docs/upsync.md), not spaces');
  const apis = JSON.parse(kcOk(VIEW, ['get', '--raw', `${root}/apis`]));
  const groups = apis.groups.map((g: { name: string }) => g.name);
  t.ok(groups.includes('apps'));
  t.notOk(groups.includes('coordination.k8s.io'), 'legacy /apis drops groups left empty');
  t.notOk(groups.includes('events.k8s.io'));
  const v1 = JSON.parse(kcOk(VIEW, ['get', '--raw', `${root}/api/v1`]));
  const names = v1.resources.map((r: { name: string }) => r.name);
  t.ok(names.includes('configmaps') && names.includes('pods/status'));
  t.notOk(names.includes('events') || names.includes('nodes') || names.includes('nodes/status') || names.includes('bindings'), 'no hidden core resource');
});

t.test('health and metrics', async (t) => {
  for (const p of ['/healthz', '/livez', '/readyz']) {
    const r = await direct(p, false);
    t.equal(r.status, 200, `${p} without credentials`);
    t.equal(r.body, 'ok');
  }
  const anon = await direct('/metrics', false);
  t.equal(anon.status, 401, '/metrics needs credentials');
  const metrics = await direct('/metrics');
  t.equal(metrics.status, 200, '/metrics for the admin');
  t.match(metrics.body, /^ksview_apiserver_requests_total\{method="GET",scope="view",code="200"\} \d+$/m);
  t.match(metrics.body, /^ksview_apiserver_request_duration_seconds_bucket\{/m);
  const status = ksview(['spaces', 'status', '--dir', testSpacesOptions().dir]);
  t.equal(status.status, 0);
  t.match(status.stdout, /^wds1\s+wds\s+\S+\s+ok \(.*ksview-serve\)$/m, 'ksview spaces status reports the view server');
});

t.test('no spelling of a discovery path skips the filter: trailing and doubled slashes', async (t) => {
  const v1 = JSON.parse(kcOk(VIEW, ['get', '--raw', `${root}/api/v1/`]));
  const names = v1.resources.map((r: { name: string }) => r.name);
  t.ok(names.includes('configmaps'));
  t.same(names.filter((n: string) => /^(events|nodes|componentstatuses|bindings)(\/|$)/.test(n)), [], '…/api/v1/ lists no hidden kind');
  const leases = kc(VIEW, ['get', '--raw', `${root}/apis/coordination.k8s.io/v1/`]);
  t.not(leases.status, 0, '…/apis/coordination.k8s.io/v1/ is not served: it has only hidden kinds');
  t.match(leases.stderr, /NotFound|could not find the requested resource/);
  const openapi = JSON.parse(kcOk(VIEW, ['get', '--raw', `${root}/openapi/v3/api/v1/`]));
  t.notOk(openapi.components.schemas['io.k8s.api.core.v1.Node'], 'OpenAPI v3 of the core group, with a trailing slash, is filtered');
  // kubectl cleans doubled slashes; a raw client does not.
  for (const p of [`${root}//api/v1`, `${root}/api//v1/`, `${root}/apis//coordination.k8s.io/v1`, `${root}/apis/`]) {
    const r = await direct(p);
    t.notMatch(r.body, /"name":"(events|nodes|componentstatuses|leases)"/, `${p}: no hidden kind`);
  }
});
