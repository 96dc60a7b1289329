import t from 'tap';
import { jsonOnlyAccept, wantsAggregatedDiscovery, wantsTable } from '../../src/apiserver/http/negotiation.js';

const KUBECTL_DISCOVERY = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,'
  + 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const KUBECTL_TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

t.test('wantsAggregatedDiscovery', async (t) => {
  t.equal(wantsAggregatedDiscovery(KUBECTL_DISCOVERY), 'v2', "kubectl's Accept header");
  t.equal(wantsAggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json'), 'v2beta1');
  t.equal(wantsAggregatedDiscovery('application/json; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList'), 'v2', 'spaces after ;');
  t.equal(wantsAggregatedDiscovery('application/json'), undefined);
  t.equal(wantsAggregatedDiscovery(undefined), undefined);
  t.equal(wantsAggregatedDiscovery(''), undefined);
  t.equal(wantsAggregatedDiscovery('application/json,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'), undefined,
    'plain JSON preferred');
  t.equal(wantsAggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json'), undefined,
    'unknown version');
  t.equal(wantsAggregatedDiscovery('application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,'
    + 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'), 'v2beta1', 'the first JSON form');
  t.equal(wantsAggregatedDiscovery(KUBECTL_TABLE), undefined, 'a Table is not discovery');
});

t.test('wantsTable', async (t) => {
  t.equal(wantsTable(KUBECTL_TABLE), 'v1', "kubectl get's Accept header");
  t.equal(wantsTable('application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'), 'v1beta1');
  t.equal(wantsTable('application/json'), undefined);
  t.equal(wantsTable('*/*'), undefined);
  t.equal(wantsTable(undefined), undefined);
  t.equal(wantsTable('application/json,application/json;as=Table;v=v1;g=meta.k8s.io'), undefined, 'plain JSON preferred');
  t.equal(wantsTable('application/json;as=Table;v=v1;g=example.com,application/json'), undefined, 'Table of another group');
  t.equal(wantsTable(KUBECTL_DISCOVERY), undefined, 'discovery is not a Table');
});

t.test('jsonOnlyAccept drops protobuf', async (t) => {
  t.equal(jsonOnlyAccept('application/vnd.kubernetes.protobuf,application/json'), 'application/json');
  t.equal(jsonOnlyAccept('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,'
    + 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json'),
  'application/json;as=Table;v=v1;g=meta.k8s.io, application/json');
  t.equal(wantsTable(jsonOnlyAccept('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io')), 'v1');
  t.equal(jsonOnlyAccept('application/vnd.kubernetes.protobuf'), 'application/json', 'nothing left: JSON');
  t.equal(jsonOnlyAccept(undefined), 'application/json');
  t.equal(jsonOnlyAccept(''), 'application/json');
  t.equal(jsonOnlyAccept(KUBECTL_DISCOVERY), KUBECTL_DISCOVERY.split(',').join(', '), 'JSON types kept in order');
});
