// kubestellar-view installed where users run it (README.md, "Install into your cluster"; docs/security.md, "Installed"): the image `make image` builds, imported
// into the real nodes of `ksview spaces up --real-nodes`, and the chart installed part by part
// (src/spaces/in-cluster-install.ts: server → host1, wds → wds1, its → its1, agent.pull → wec1). Checked as
// an operator checks it: Pod Security `restricted` enforced on the namespaces and met by the pods;
// the aggregator verifying the server's certificate (no insecureSkipTLSVerify) in each tls.type
// installed (helm, then existingSecret); kubectl through the view served by the pods; a denatured
// ClusterRoleBinding granting in wec1 only; placement → a real container in wec1 → its readiness
// back in wds1; a rolling update and a deleted pod under 20 requests/s with 0 failed requests and
// the APIService Available at every 200 ms probe; the leader pod deleted, another leading and
// placement going on. Runs where real nodes can (root, cgroups, netns); skips with the reason
// otherwise. Spaces of their own: test/fixtures/real-node-spaces.ts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { viewRoot } from '../../src/apiserver/groups/view-group.js';
import { createCA, issueCert } from '../../src/kube/pki.js';
import { defaultCacheDir } from '../../src/spaces/binaries.js';
import { buildImage } from '../../src/spaces/image.js';
import {
  helmPart, installInCluster, RELEASES, SERVER_DEPLOYMENT, SERVER_NAMESPACE, serverValues, waitApiServiceAvailable,
  type InClusterOptions,
} from '../../src/spaces/in-cluster-install.js';
import { renderKubeconfig, spaceKubeconfigEntries, viewKubeconfigEntries } from '../../src/spaces/kubeconfig.js';
import { httpdDeployment } from '../../src/spaces/real-workload.js';
import { APISERVICE_NAME } from '../../src/spaces/view-server.js';
import { ADMIN_EXECUTOR } from '../../src/spaces/wec-executors.js';
import { stderrProgress } from '../../src/util/progress.js';
import { realNodeSpacesDown, realNodeSpacesUp, realNodesUnavailable } from '../fixtures/real-node-spaces.js';
import { kubectlAsync, uniqueName, waitUntil } from '../fixtures/spaces.js';
import { apiServiceWatch, viewLoad } from '../fixtures/view-load.js';

const unavailable = realNodesUnavailable();
type Obj = Record<string, any>;

t.test('kubestellar-view from its image and chart, on real nodes', { skip: unavailable ?? false, timeout: 2_400_000 }, async (t) => {
  const progress = stderrProgress();
  const spaces = realNodeSpacesUp();
  if (process.env.CI) t.teardown(() => { realNodeSpacesDown(); });
  const { layout } = spaces;
  const cacheDir = defaultCacheDir();
  const image = await buildImage({ cacheDir, progress });
  const install: InClusterOptions = { layout, cacheDir, progress, image };
  const installStarted = Date.now();
  await installInCluster(install);
  t.comment(`image ${image.name}; chart installed and APIService Available in ${((Date.now() - installStarted) / 1000).toFixed(1)}s`);

  const kubeconfig = path.join(layout.dir, 'kubeconfig-in-cluster-test');
  writeFileSync(kubeconfig, renderKubeconfig([...spaceKubeconfigEntries(layout), ...viewKubeconfigEntries(layout, viewRoot)]), { mode: 0o600 });
  // kubectl without blocking the event loop: the load and the probe of viewLoad/apiServiceWatch
  // must keep their pace while the test waits on kubectl.
  const kc = (ctx: string, args: string[], input?: string) => kubectlAsync(kubeconfig, ctx, args, input);
  const kcOk = async (ctx: string, args: string[], input?: string): Promise<string> => {
    const r = await kc(ctx, args, input);
    if (r.status !== 0) throw new Error(`kubectl --context ${ctx} ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const json = async (ctx: string, args: string[]): Promise<Obj> => JSON.parse(await kcOk(ctx, [...args, '-o', 'json'])) as Obj;
  const serverPods = async (): Promise<Obj[]> => (await json('host1', ['-n', SERVER_NAMESPACE, 'get', 'pods', '-l', 'app.kubernetes.io/component=apiserver'])).items as Obj[];
  const rolledOut = async (): Promise<boolean> => {
    const d = await json('host1', ['-n', SERVER_NAMESPACE, 'get', 'deployment', SERVER_DEPLOYMENT]);
    const s = d.status ?? {};
    const pods = await serverPods();
    return s.observedGeneration >= d.metadata.generation && s.updatedReplicas === d.spec.replicas && s.availableReplicas === d.spec.replicas
      && s.replicas === d.spec.replicas && pods.length === d.spec.replicas && pods.every((p) => !p.metadata.deletionTimestamp);
  };

  const ns = uniqueName('incluster');
  await kcOk('wds1-view', ['create', 'namespace', ns]);
  t.teardown(async () => { await kc('wds1-view', ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']); });
  const probePath = `${viewRoot('wds1')}/api/v1/namespaces/${ns}/configmaps/probe`;

  await t.test('Pod Security restricted is enforced on the namespaces and the pods run under it', async (t) => {
    for (const [ctx, namespace] of [['host1', SERVER_NAMESPACE], ['wec1', RELEASES.agent.namespace]] as const) {
      const labels = (await json(ctx, ['get', 'namespace', namespace])).metadata.labels as Record<string, string>;
      t.equal(labels['pod-security.kubernetes.io/enforce'], 'restricted', `${ctx}/${namespace} enforces restricted`);
      const refused = await kc(ctx, ['-n', namespace, 'run', 'privileged', `--image=${image.name}`, '--image-pull-policy=Never', '--privileged', '--dry-run=server']);
      t.not(refused.status, 0, `${ctx}/${namespace}: a privileged pod is refused`);
      t.match(refused.stderr, /violates PodSecurity "restricted/, 'by Pod Security admission');
    }
    const pods = [...(await serverPods()), ...((await json('wec1', ['-n', RELEASES.agent.namespace, 'get', 'pods'])).items as Obj[])];
    t.ok(pods.length >= 3, `${pods.length} pods: 2 servers, 1 agent`);
    for (const p of pods) {
      t.equal(p.status.phase, 'Running', `${p.metadata.name} runs`);
      const c = p.spec.containers[0];
      t.equal(c.securityContext?.readOnlyRootFilesystem, true, `${p.metadata.name}: read-only root filesystem`);
      t.equal(p.spec.securityContext?.runAsUser ?? c.securityContext?.runAsUser, 65532, `${p.metadata.name}: UID 65532`);
      t.match(p.status.containerStatuses[0].containerID, /^containerd:\/\//, `${p.metadata.name}: a real container`);
      t.notOk(p.spec.hostNetwork, `${p.metadata.name}: not on the host network`);
    }
  });

  await t.test('the aggregator reaches the pods through the Service and verifies their certificate', async (t) => {
    const svc = await json('wds1', ['get', 'apiservice', APISERVICE_NAME]);
    t.notOk(svc.spec.insecureSkipTLSVerify, 'no insecureSkipTLSVerify');
    const ca = (await kcOk('host1', ['-n', SERVER_NAMESPACE, 'get', 'secret', 'kubestellar-view-serving-cert', '-o', 'jsonpath={.data.ca\\.crt}'])).trim();
    t.equal(svc.spec.caBundle, ca, 'caBundle is the CA of the serving certificate in host1');
    const wdsService = await json('wds1', ['-n', SERVER_NAMESPACE, 'get', 'service', 'ksview']);
    t.notOk(wdsService.spec.selector, 'the Service in wds1 has no selector');
    t.not(wdsService.spec.type, 'ExternalName', 'and is no ExternalName');
    const podIps = (await serverPods()).map((p) => p.status.podIP as string).sort();
    const mirrored = await waitUntil('wds1 endpoints = the server pods', async () => {
      const ep = await json('wds1', ['-n', SERVER_NAMESPACE, 'get', 'endpoints', 'ksview']);
      const ips = ((ep.subsets ?? []) as Obj[]).flatMap((s) => ((s.addresses ?? []) as Obj[]).map((a) => a.ip as string)).sort();
      return JSON.stringify(ips) === JSON.stringify(podIps) && ips;
    });
    t.same(mirrored, podIps, 'the endpoints in wds1 are the pod IPs in host1');
  });

  await t.test('kubectl through the view served by the pods; a denatured ClusterRoleBinding grants in wec1 only', async (t) => {
    await kcOk('wds1-view', ['-n', ns, 'create', 'configmap', 'probe', '--from-literal=v=1']);
    t.equal(await kcOk('wds1', ['-n', ns, 'get', 'configmap', 'probe', '-o', 'jsonpath={.data.v}']), '1', 'written through the view, native in wds1');
    const bob = uniqueName('bob');
    const binding = YAML.stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `${ns}-view`, labels: { app: `${ns}-rbac` } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: bob }],
    });
    await kcOk('wds1-view', ['apply', '-f', '-'], binding);
    t.teardown(async () => { await kc('wds1-view', ['delete', 'clusterrolebinding', `${ns}-view`, '--ignore-not-found']); });
    t.ok(await kcOk('wds1', ['get', 'clusterrolebindings.denatured.kubestellar.io', `${ns}-view`, '-o', 'name']), 'stored denatured in wds1');
    const policy = YAML.stringify({
      apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: `${ns}-rbac` },
      spec: {
        clusterSelectors: [{ matchLabels: { name: 'wec1' } }],
        downsync: [{ apiGroup: 'rbac.authorization.k8s.io', resources: ['clusterrolebindings'], objectSelectors: [{ matchLabels: { app: `${ns}-rbac` } }] }],
        executor: { serviceAccount: ADMIN_EXECUTOR },
      },
    });
    await kcOk('wds1', ['apply', '-f', '-'], policy);
    t.teardown(async () => { await kc('wds1', ['delete', 'bindingpolicy', `${ns}-rbac`, '--ignore-not-found']); });
    const canI = async (ctx: string) => (await kc(ctx, ['auth', 'can-i', '--as', bob, 'list', 'pods', '-n', 'default'])).stdout.trim();
    await waitUntil('the binding granting in wec1', async () => (await canI('wec1')) === 'yes', 120_000, 500);
    t.equal(await canI('wec1'), 'yes', `${bob} may list pods in wec1`);
    t.equal(await canI('wds1'), 'no', 'but not in wds1, where the binding is data');
    t.equal(await canI('wec2'), 'no', 'nor in wec2, not selected');
  });

  await t.test('placement: a real container in wec1, its readiness back in wds1', async (t) => {
    await kcOk('wds1-view', ['apply', '-f', '-'], httpdDeployment({ namespace: ns, name: 'web', labels: { app: ns } }));
    await kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({
      apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: ns },
      spec: {
        clusterSelectors: [{ matchLabels: { name: 'wec1' } }],
        downsync: [{ namespaces: [ns], objectSelectors: [{ matchLabels: { app: ns } }], wantSingletonReportedState: true }],
      },
    }));
    t.teardown(async () => { await kc('wds1', ['delete', 'bindingpolicy', ns, '--ignore-not-found']); });
    const pod = await waitUntil('a Ready httpd pod in wec1', async () => {
      const pods = (await json('wec1', ['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/name=web'])).items as Obj[];
      return pods.find((p) => (p.status.conditions as Obj[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }, 180_000, 1000);
    t.match(pod.status.containerStatuses[0].containerID, /^containerd:\/\//, 'the workload runs as a real container');
    t.ok(pod.status.podIP, 'with a pod IP of wec1\'s node');
    const ready = await waitUntil('readyReplicas 1 in wds1', async () => (await kcOk('wds1', ['-n', ns, 'get', 'deployment', 'web', '-o', 'jsonpath={.status.readyReplicas}'])).trim() === '1', 120_000, 500);
    t.ok(ready, 'wec1\'s readiness returned into wds1');
  });

  await t.test('a rolling update of the server under 20 requests/s: 0 failed, the APIService Available throughout', async (t) => {
    const load = await viewLoad(kubeconfig, 'wds1', probePath, 20);
    const probe = await apiServiceWatch(kubeconfig, 'wds1', APISERVICE_NAME, 200);
    const before = new Set((await serverPods()).map((p) => p.metadata.name as string));
    await helmPart(install, RELEASES.server, serverValues({ ...install, serverValues: { server: { podAnnotations: { 'kubestellar.io/restarted-at': String(Date.now()) } } } }));
    await waitUntil('the rollout done, the old pods gone', async () => await rolledOut() && (await serverPods()).every((p) => !before.has(p.metadata.name)), 300_000, 500);
    const [l, p] = [await load.stop(), await probe.stop()];
    t.comment(`${l.sent} requests, ${p.sent} APIService probes`);
    t.ok(l.sent >= 100, 'the load ran through the whole rollout');
    t.equal(l.failed, 0, `no failed request${l.failures.length ? `: ${l.failures.join('; ')}` : ''}`);
    t.equal(p.failed, 0, `Available at every probe${p.failures.length ? `: ${p.failures.join('; ')}` : ''}`);
  });

  await t.test('a server pod deleted under the same load: 0 failed', async (t) => {
    const load = await viewLoad(kubeconfig, 'wds1', probePath, 20);
    const probe = await apiServiceWatch(kubeconfig, 'wds1', APISERVICE_NAME, 200);
    const victim = (await serverPods())[0]!.metadata.name as string;
    await kcOk('host1', ['-n', SERVER_NAMESPACE, 'delete', 'pod', victim, '--wait=true']);
    await waitUntil('a replacement ready', async () => await rolledOut() && !(await serverPods()).some((p) => p.metadata.name === victim), 300_000, 500);
    const [l, p] = [await load.stop(), await probe.stop()];
    t.ok(l.sent >= 40, `${l.sent} requests`);
    t.equal(l.failed, 0, `no failed request${l.failures.length ? `: ${l.failures.join('; ')}` : ''}`);
    t.equal(p.failed, 0, `Available at every probe${p.failures.length ? `: ${p.failures.join('; ')}` : ''}`);
  });

  await t.test('the leader pod deleted: another replica leads and placement goes on', async (t) => {
    const holder = async () => (await kcOk('wds1', ['-n', SERVER_NAMESPACE, 'get', 'lease', 'kubestellar-view-placement-wds1', '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
    const pods = (await serverPods()).map((p) => p.metadata.name as string);
    const leader = await waitUntil('a leader among the pods', async () => { const h = await holder(); return pods.find((p) => h.startsWith(`${p}-`)); }, 60_000, 500);
    await kcOk('host1', ['-n', SERVER_NAMESPACE, 'delete', 'pod', leader, '--wait=false']);
    const next = await waitUntil('another pod leading', async () => {
      const h = await holder();
      return h && !h.startsWith(`${leader}-`) && h;
    }, 120_000, 250);
    t.notOk(next.startsWith(`${leader}-`), `the Lease moved from ${leader} to ${next}`);
    // Made after the kill: a policy of its own selecting the probe, and a change to the probe.
    await kcOk('wds1-view', ['-n', ns, 'label', 'configmap', 'probe', `probe=${ns}`, '--overwrite']);
    await kcOk('wds1-view', ['-n', ns, 'patch', 'configmap', 'probe', '--type=merge', '-p', '{"data":{"v":"after-the-leader"}}']);
    await kcOk('wds1', ['apply', '-f', '-'], YAML.stringify({
      apiVersion: 'control.kubestellar.io/v1alpha1', kind: 'BindingPolicy', metadata: { name: `${ns}-probe` },
      spec: { clusterSelectors: [{ matchLabels: { name: 'wec1' } }], downsync: [{ namespaces: [ns], objectSelectors: [{ matchLabels: { probe: ns } }] }] },
    }));
    t.teardown(async () => { await kc('wds1', ['delete', 'bindingpolicy', `${ns}-probe`, '--ignore-not-found']); });
    const reached = await waitUntil('the change in wec1', async () => (await kc('wec1', ['-n', ns, 'get', 'configmap', 'probe', '-o', 'jsonpath={.data.v}'])).stdout.trim() === 'after-the-leader', 120_000, 500);
    t.ok(reached, 'a change made after the kill reached wec1');
    await waitUntil('two server pods again', rolledOut, 300_000, 500);
  });

  await t.test('tls.type existingSecret: the aggregator verifies the CA the user gave', async (t) => {
    const ca = await createCA('kubestellar-view test CA');
    const cert = await issueCert(ca, { commonName: 'ksview', dnsNames: ['ksview.kubestellar-view.svc', 'ksview.kubestellar-view.svc.cluster.local', 'kubestellar-view.kubestellar-view.svc'], usages: ['server'] });
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await kcOk('host1', ['apply', '-f', '-'], YAML.stringify({
      apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'users-serving-cert', namespace: SERVER_NAMESPACE },
      data: { 'tls.crt': b64(cert.certPem), 'tls.key': b64(cert.keyPem), 'ca.crt': b64(ca.certPem) },
    }));
    await helmPart(install, RELEASES.server, serverValues({ ...install, tls: { type: 'existingSecret', secret: 'users-serving-cert' } }));
    await waitUntil('the rollout with the user\'s certificate', rolledOut, 300_000, 500);
    await waitUntil('the caBundle of the user\'s CA', async () => (await json('wds1', ['get', 'apiservice', APISERVICE_NAME])).spec.caBundle === b64(ca.certPem), 120_000, 500);
    await waitApiServiceAvailable(layout, 120_000);
    t.notOk((await json('wds1', ['get', 'apiservice', APISERVICE_NAME])).spec.insecureSkipTLSVerify, 'still verified');
    t.equal(await kcOk('wds1-view', ['-n', ns, 'get', 'configmap', 'probe', '-o', 'jsonpath={.data.v}']), 'after-the-leader', 'the view answers with the user\'s certificate');
  });
});
