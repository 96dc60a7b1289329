import t from 'tap';
import { LabelSelectorError, matchesLabelSelector, matchesRequirements, parseLabelSelector } from '../../src/kube/label-selector.js';

const labels = { app: 'nginx', tier: 'web', n: '7', empty: '' };
const matches = (s: string) => matchesRequirements(parseLabelSelector(s), labels);

t.test('parseLabelSelector: the requirements of labels.Parse', async (t) => {
  t.strictSame(parseLabelSelector(''), []);
  t.strictSame(parseLabelSelector('  '), []);
  t.strictSame(parseLabelSelector('a=b,c==d, e != f'), [
    { key: 'a', operator: 'In', values: ['b'] }, { key: 'c', operator: 'In', values: ['d'] }, { key: 'e', operator: 'NotIn', values: ['f'] }]);
  t.strictSame(parseLabelSelector('x in (foo,,baz),y,!z, w notin ()'), [
    { key: 'x', operator: 'In', values: ['', 'baz', 'foo'] }, { key: 'y', operator: 'Exists' }, { key: 'z', operator: 'DoesNotExist' },
    { key: 'w', operator: 'NotIn', values: [''] }]);
  t.strictSame(parseLabelSelector('a in (b,c),d in (,e),f in (g,)'), [
    { key: 'a', operator: 'In', values: ['b', 'c'] }, { key: 'd', operator: 'In', values: ['', 'e'] }, { key: 'f', operator: 'In', values: ['', 'g'] }]);
  t.strictSame(parseLabelSelector('a='), [{ key: 'a', operator: 'In', values: [''] }], 'an empty value');
  t.strictSame(parseLabelSelector('in in (in, notin)'), [{ key: 'in', operator: 'In', values: ['in', 'notin'] }], 'keywords as key and values');
  t.strictSame(parseLabelSelector('a>1,b<2'), [{ key: 'a', operator: 'Gt', values: ['1'] }, { key: 'b', operator: 'Lt', values: ['2'] }]);
  t.strictSame(parseLabelSelector('example.com/a-b_c.d=X_y'), [{ key: 'example.com/a-b_c.d', operator: 'In', values: ['X_y'] }]);
});

t.test('parseLabelSelector: kube-apiserver 1.33 messages for what it refuses', async (t) => {
  const invalidKey = (k: string) => `unable to parse requirement: <nil>: Invalid value: "${k}": name part must consist of alphanumeric characters, '-', '_' or '.', ` +
    "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const cases: Array<[string, string]> = [
    ['===', "found '==', expected: !, identifier, or 'end of string'"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a!', "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"],
    ['Bad_ ', invalidKey('Bad_')],
    ['-a', invalidKey('-a')],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a in (x', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (x y)', "unable to parse requirement: found 'y', expected: ',' or ')'"],
    ['a in x', "unable to parse requirement: found 'x' expected: '('"],
    ['a,', "found '', expected: identifier after ','"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['a>1.5', `unable to parse requirement: values[0]: Invalid value: "1.5": for 'Gt', 'Lt' operators, the value must be an integer`],
    ['a>', `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`],
    ['a=-x', 'unable to parse requirement: values[0][a]: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, ' +
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
    ['/a', 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'],
    ['A.b/c', 'unable to parse requirement: <nil>: Invalid value: "A.b/c": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric ' +
      "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
    ['a/b/c', 'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', ' +
      "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"],
    ['b<-2', 'unable to parse requirement: values[0][b]: Invalid value: "-2": a valid label must be an empty string or consist of alphanumeric characters, ' +
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
    ['a'.repeat(64), `unable to parse requirement: <nil>: Invalid value: "${'a'.repeat(64)}": name part must be no more than 63 characters`],
  ];
  for (const [sel, message] of cases) t.throws(() => parseLabelSelector(sel), new LabelSelectorError(message), sel);
});

t.test('one matcher for parsed strings and metav1.LabelSelectors', async (t) => {
  for (const s of ['', 'app=nginx', 'app==nginx', 'app = nginx', 'app!=db', 'other!=x', 'app', '!other', 'app in (nginx,x)', 'other notin (x)',
    'tier notin (db)', 'empty=', 'empty in ()', 'n>6', 'n<8', 'app=nginx,tier=web']) t.ok(matches(s), s);
  for (const s of ['app=db', 'app!=nginx', 'other', '!app', 'other=', 'app in (x)', 'app notin (nginx)', 'n>7', 'n<7', 'app>1', 'other>1',
    'app=nginx,tier=db']) t.notOk(matches(s), s);
  t.ok(matchesLabelSelector({ matchLabels: { app: 'nginx' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] }, labels));
  t.notOk(matchesLabelSelector({ matchLabels: { app: 'nginx', tier: 'db' } }, labels));
  t.throws(() => matchesLabelSelector({ matchExpressions: [{ key: 'n', operator: 'Gt', values: ['1'] }] }, labels), LabelSelectorError,
    'Gt is no metav1.LabelSelector operator');
});
