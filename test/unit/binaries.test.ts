import t from 'tap';
import { defaultCacheDir, kubernetesVersion } from '../../src/spaces/binaries.js';
import { defaultSpacesDir } from '../../src/spaces/layout.js';

t.test('the Kubernetes version comes from the wrapper module and is within one minor of kubectl 1.32', async (t) => {
  t.match(kubernetesVersion(), /^v1\.33\.\d+$/);
});

t.test('cache and state folders follow XDG and can be overridden', async (t) => {
  t.equal(defaultCacheDir({ KSVIEW_CACHE_DIR: '/c' }), '/c');
  t.equal(defaultCacheDir({ XDG_CACHE_HOME: '/x' }), '/x/kubestellar-view');
  t.equal(defaultSpacesDir({ KSVIEW_SPACES_DIR: '/s' }), '/s');
  t.equal(defaultSpacesDir({ XDG_STATE_HOME: '/st' }), '/st/kubestellar-view/spaces');
});
