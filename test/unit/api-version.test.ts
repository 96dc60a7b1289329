// An apiVersion and its group and version, both ways (src/kube/api-version.ts): the core group is
// '' and its apiVersion the version alone; a group's version keeps any further slash.
import t from 'tap';
import { joinApiVersion, splitApiVersion } from '../../src/kube/api-version.js';

t.test('split and joined back', async (t) => {
  t.same(splitApiVersion('apps/v1'), { group: 'apps', version: 'v1' });
  t.same(splitApiVersion('v1'), { group: '', version: 'v1' });
  t.same(splitApiVersion(''), { group: '', version: '' }, 'no apiVersion: no group, no version');
  t.same(splitApiVersion('a/b/c'), { group: 'a', version: 'b/c' }, 'the group ends at the first slash');
  for (const av of ['apps/v1', 'v1', 'rbac.authorization.k8s.io/v1']) {
    const { group, version } = splitApiVersion(av);
    t.equal(joinApiVersion(group, version), av, `${av} round-trips`);
  }
});
