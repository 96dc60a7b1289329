import t from 'tap';
import { escapeFieldValue, fieldSelectorMatcher, fieldSelectorTerm, FieldSelectorError, parseFieldSelector } from '../../src/kube/field-selector.js';

t.test('parseFieldSelector: the terms of fields.ParseSelector', async (t) => {
  t.strictSame(parseFieldSelector(''), []);
  t.strictSame(parseFieldSelector('metadata.name=a,,metadata.namespace!=b'), [
    { field: 'metadata.name', operator: '=', value: 'a' }, { field: 'metadata.namespace', operator: '!=', value: 'b' }]);
  t.strictSame(parseFieldSelector('metadata.name==a'), [{ field: 'metadata.name', operator: '==', value: 'a' }]);
  t.strictSame(parseFieldSelector('metadata.name=a\\,b\\=c\\\\d,x='), [
    { field: 'metadata.name', operator: '=', value: 'a,b=c\\d' }, { field: 'x', operator: '=', value: '' }], 'escapes, an empty value');
  for (const v of ['a,b=c\\d', 'plain', '']) {
    const r = { field: 'f', operator: '!=' as const, value: v };
    t.strictSame(parseFieldSelector(fieldSelectorTerm(r)), [r], `round trip of ${JSON.stringify(v)}`);
  }
  t.equal(escapeFieldValue('a,b=c\\d'), 'a\\,b\\=c\\\\d');
});

t.test('parseFieldSelector: kube-apiserver 1.33 messages', async (t) => {
  const cases: Array<[string, string]> = [
    ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
    ['a=b,metadata.name', "invalid selector: 'a=b,metadata.name'; can't understand 'metadata.name'"],
    ['metadata.name=a=b', 'invalid field selector: unescaped character in value: 61'],
    ['metadata.name=a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['metadata.name=a\\b', 'invalid field selector: invalid escape sequence: \\b'],
  ];
  for (const [sel, message] of cases) t.throws(() => parseFieldSelector(sel), new FieldSelectorError(message), sel);
});

t.test('fieldSelectorMatcher', async (t) => {
  const fields = { 'metadata.name': 'wds1' };
  const m = (s: string) => fieldSelectorMatcher(s, ['metadata.name'])(fields);
  for (const s of ['', 'metadata.name=wds1', 'metadata.name==wds1', 'metadata.name!=wds2']) t.ok(m(s), s);
  for (const s of ['metadata.name=wds2', 'metadata.name!=wds1', 'metadata.name=wds1,metadata.name=x']) t.notOk(m(s), s);
  t.throws(() => fieldSelectorMatcher('spec.type=WDS', ['metadata.name']), new FieldSelectorError('field label not supported: spec.type'),
    'an unsupported field is refused before any object is matched');
});
