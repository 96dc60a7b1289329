import t from 'tap';
import { upstreamHeaders } from '../../src/apiserver/auth/impersonation.js';
import type { UserInfo } from '../../src/kube/user.js';

const incoming = () => ({
  authorization: 'Bearer client-token',
  'impersonate-user': 'system:admin',
  'Impersonate-Group': 'system:masters',
  'impersonate-uid': 'root-uid',
  'impersonate-extra-scopes': 'all',
  'x-remote-user': 'system:admin',
  'X-Remote-Group': ['system:masters'],
  'x-remote-extra-scopes': 'all',
  connection: 'keep-alive',
  'keep-alive': 'timeout=5',
  'proxy-authorization': 'Basic eDp5',
  'proxy-connection': 'keep-alive',
  te: 'trailers',
  trailer: 'expires',
  'transfer-encoding': 'chunked',
  upgrade: 'websocket',
  host: 'view.example:6443',
  'content-type': 'application/json',
  accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
  'user-agent': 'kubectl/v1.32.0',
  'x-custom': ['a', 'b'],
  'content-length': undefined,
});

const alice: UserInfo = {
  username: 'alice', uid: 'uid-1', groups: ['dev', 'system:authenticated'],
  extra: { 'scopes.example.com/a b': ['s1', 's2'], empty: [], "x!'()*": ['v'] },
};

t.test('client credentials, identity and hop-by-hop headers are dropped; the user is impersonated', async (t) => {
  const input = incoming();
  const out = upstreamHeaders(input, alice);
  t.strictSame(out, {
    'content-type': 'application/json',
    accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    'user-agent': 'kubectl/v1.32.0',
    'x-custom': ['a', 'b'],
    'impersonate-user': 'alice',
    'impersonate-uid': 'uid-1',
    'impersonate-group': ['dev', 'system:authenticated'],
    'impersonate-extra-scopes.example.com%2Fa%20b': ['s1', 's2'],
    'impersonate-extra-x%21%27%28%29%2A': ['v'],
  });
  t.strictSame(input, incoming(), 'incoming headers not modified');
});

t.test("the server's own credential replaces the client's", async (t) => {
  const out = upstreamHeaders(incoming(), alice, 'Bearer server-token');
  t.equal(out.authorization, 'Bearer server-token');
  t.equal(out['impersonate-user'], 'alice');
});

t.test('a user without uid, groups or extra gets only Impersonate-User', async (t) => {
  const out = upstreamHeaders({ 'Impersonate-User': 'root', Authorization: 'Bearer x', Accept: 'application/json' },
    { username: 'bob', groups: [], extra: {} });
  t.strictSame(out, { Accept: 'application/json', 'impersonate-user': 'bob' });
});

t.test('headers the client names in Connection are hop-by-hop and dropped', async (t) => {
  const out = upstreamHeaders({ connection: 'keep-alive, X-Secret-Hop', 'x-secret-hop': 'v', accept: 'application/json' },
    { username: 'u', groups: [], extra: {} });
  t.notOk('x-secret-hop' in out);
  t.equal(out.accept, 'application/json');
});
