#!/usr/bin/env node
// `make image` (after `make build`): builds dist/kubestellar-view-<version>.oci.tar with buildah,
// by src/spaces/image.ts (README.md, "Image"). Prints the archive, the name and the digest.
import path from 'node:path';
import { buildImage, imageSizes } from '../../dist/src/spaces/image.js';
import { defaultCacheDir } from '../../dist/src/spaces/binaries.js';
import { stderrProgress } from '../../dist/src/util/progress.js';
import { UserError } from '../../dist/src/util/user-error.js';

const started = Date.now();
try {
  const image = await buildImage({ cacheDir: defaultCacheDir(), progress: stderrProgress(started) });
  const { archiveBytes, unpackedBytes } = imageSizes(image.archive, path.join(path.dirname(image.archive), 'image', 'rootfs'));
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  process.stdout.write(`image ${image.name}\narchive ${path.relative(process.cwd(), image.archive)} (${mb(archiveBytes)}; unpacked ${mb(unpackedBytes)})\n`
    + `digest ${image.digest}\ncommit ${image.commit}${image.dirty ? ' (dirty tree)' : ''}\nbuilt in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
} catch (err) {
  if (!(err instanceof UserError)) throw err;
  process.stderr.write(`make image: ${err.message}\n`);
  process.exitCode = 1;
}
