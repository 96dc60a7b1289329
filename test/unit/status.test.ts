import t from 'tap';
import { errors, isStatus, statusForText, StatusError, toStatus } from '../../src/kube/status.js';

const shape = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure' };

t.test('errors.* are StatusErrors carrying a Kubernetes Status', async (t) => {
  const cases: Array<[StatusError, number, string]> = [
    [errors.badRequest('bad'), 400, 'BadRequest'],
    [errors.unauthorized(), 401, 'Unauthorized'],
    [errors.forbidden('no'), 403, 'Forbidden'],
    [errors.notFound({ kind: 'pods', name: 'p' }), 404, 'NotFound'],
    [errors.pathNotFound(), 404, 'NotFound'],
    [errors.methodNotAllowed('PATCH'), 405, 'MethodNotAllowed'],
    [errors.notAcceptable('only json'), 406, 'NotAcceptable'],
    [errors.requestEntityTooLarge(10), 413, 'RequestEntityTooLarge'],
    [errors.unsupportedMediaType('text/plain'), 415, 'UnsupportedMediaType'],
    [errors.tooManyRequests('slow down'), 429, 'TooManyRequests'],
    [errors.internal('boom'), 500, 'InternalError'],
    [errors.notImplemented('later'), 501, 'NotImplemented'],
    [errors.serviceUnavailable('down'), 503, 'ServiceUnavailable'],
    [errors.gatewayTimeout('slow'), 504, 'Timeout'],
  ];
  for (const [e, code, reason] of cases) {
    t.ok(e instanceof Error, reason);
    t.equal(e.name, 'StatusError');
    t.equal(e.code, code, `${reason} code`);
    t.match(e.status, { ...shape, code, reason }, `${reason} status`);
    t.equal(e.message, e.status.message);
  }
  t.equal(errors.unauthorized().status.message, 'Unauthorized');
  t.equal(errors.internal('boom').message, 'Internal error occurred: boom');
  t.match(errors.unsupportedMediaType('text/plain').message, /got text\/plain$/);
  t.match(errors.methodNotAllowed('PATCH').message, /PATCH$/);
  t.equal(errors.requestEntityTooLarge(10).message, 'the request body is larger than the limit of 10 bytes');
});

t.test('notFound and forbidden details', async (t) => {
  const grouped = errors.notFound({ group: 'apps', kind: 'deployments', name: 'web' }).status;
  t.equal(grouped.message, 'deployments.apps "web" not found');
  t.strictSame(grouped.details, { name: 'web', group: 'apps', kind: 'deployments' });
  const core = errors.notFound({ kind: 'pods', name: 'p1' }).status;
  t.equal(core.message, 'pods "p1" not found');
  t.strictSame(core.details, { name: 'p1', kind: 'pods' });
  const unnamed = errors.notFound({ kind: 'spaces' }).status;
  t.equal(unnamed.message, 'the server could not find the requested resource');
  t.equal(errors.notFound({ kind: 'pods', name: 'p' }, 'custom').message, 'custom');
  const f = errors.forbidden('denied', { kind: 'pods', name: 'p' }).status;
  t.strictSame(f.details, { kind: 'pods', name: 'p' });
  t.equal(errors.forbidden('denied').status.details, undefined);
  t.notOk('details' in errors.badRequest('x').status, 'no details key when none given');
});

t.test('invalid: one cause per field, the native wording', async (t) => {
  const one = errors.invalid({ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' },
    [{ reason: 'FieldValueRequired', field: 'rules[0].verbs', message: 'Required value' }]);
  t.equal(one.code, 422);
  t.equal(one.status.reason, 'Invalid');
  t.equal(one.message, 'ClusterRole.rbac.authorization.k8s.io "r" is invalid: rules[0].verbs: Required value');
  t.strictSame(one.status.details, { name: 'r', group: 'rbac.authorization.k8s.io', kind: 'ClusterRole',
    causes: [{ reason: 'FieldValueRequired', field: 'rules[0].verbs', message: 'Required value' }] });
  const two = errors.invalid({ group: '', kind: 'ServiceAccount', name: 's' },
    [{ field: 'a', message: 'x' }, { field: 'b', message: 'y' }]).status;
  t.equal(two.message, 'ServiceAccount "s" is invalid: [a: x, b: y]');
  t.notOk('group' in two.details!, 'no group for the core group');
});

t.test('statusForText and isStatus', async (t) => {
  t.match(statusForText(404, '  404 page not found\n'), { ...shape, code: 404, reason: 'NotFound', message: '404 page not found' });
  t.equal(statusForText(502, '').message, 'HTTP 502');
  t.equal(statusForText(500, 'x'.repeat(600)).message.length, 500);
  t.ok(isStatus({ kind: 'Status', status: 'Success' }));
  t.notOk(isStatus({ kind: 'ConfigMap' }));
  t.notOk(isStatus([{ kind: 'Status' }]));
  t.notOk(isStatus(null));
});

t.test('toStatus', async (t) => {
  const se = errors.forbidden('denied');
  t.equal(toStatus(se), se.status, 'a StatusError as it is');
  const big = toStatus(Object.assign(new Error('Request body is too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }));
  t.match(big, { ...shape, code: 413, reason: 'RequestEntityTooLarge' });
  t.match(big.message, String(3 * 1024 * 1024), "the message names kube-apiserver's limit, 3 MiB");
  t.match(toStatus({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }), { code: 413, reason: 'RequestEntityTooLarge' }, 'plain object');
  t.match(toStatus({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415, message: 'Unsupported Media Type: text/csv' }),
    { code: 415, reason: 'UnsupportedMediaType' });
  t.match(toStatus(Object.assign(new Error('Route GET:/x not found'), { statusCode: 404 })), { ...shape, code: 404, reason: 'NotFound' });
  t.match(toStatus({ statusCode: 405 }), { code: 405, reason: 'MethodNotAllowed' });
  t.match(toStatus({ statusCode: 400, message: 'Body is not valid JSON' }), { code: 400, reason: 'BadRequest', message: 'Body is not valid JSON' });
  t.match(toStatus(new Error('boom')), { ...shape, code: 500, reason: 'InternalError', message: 'Internal error occurred: boom' });
  t.match(toStatus(new TypeError('x is undefined')), { code: 500, reason: 'InternalError' });
  t.match(toStatus('a string'), { code: 500, reason: 'InternalError' });
  t.match(toStatus(undefined), { code: 500, reason: 'InternalError' });
  t.match(toStatus(null), { code: 500, reason: 'InternalError' });
});
