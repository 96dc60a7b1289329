# The two commands of the README's Quick start: `make demo` and `make test`. Each installs what it
# needs: npm packages from the lockfile, the TypeScript build, and (inside ksview) etcd from
# Debian and the Kubernetes binaries built from their Go modules.
.PHONY: all deps build image demo demo-cluster test test-unit test-integration spaces-up spaces-down clean

all: build

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

deps: node_modules/.package-lock.json

build: deps
	npx tsc -p tsconfig.json

# dist/kubestellar-view-<version>.oci.tar, built with buildah (README.md, "Image").
image: build
	node build/image/build.mjs

demo: build
	node bin/ksview.js demo

# The installed product (root): real-node spaces, the image, the chart, the view served by pods.
demo-cluster: build
	node bin/ksview.js demo --in-cluster

test: build
	node test/run.mjs

test-unit: build
	node test/run.mjs test/unit

test-integration: build
	node test/run.mjs test/integration

spaces-up: build
	node bin/ksview.js spaces up

spaces-down: build
	node bin/ksview.js spaces down

clean:
	rm -rf dist .tap coverage

# Helm built from helm.sh/helm/v3 (build/helm, cached like the Kubernetes binaries); prints its path,
# e.g. `$(make -s helm) lint --strict charts/kubestellar-view -f charts/kubestellar-view/ci/wds-values.yaml`.
.PHONY: helm
helm: build
	@node --input-type=module -e "const { ensureHelm } = await import('./dist/src/spaces/helm.js'); const { stderrProgress } = await import('./dist/src/util/progress.js'); console.log(await ensureHelm(undefined, stderrProgress()));"
