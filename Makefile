# Every build and test uses the vendored modules, and the same CGO setting as the
# test binaries built by hack/tools.sh, so the Go build cache is shared; -trimpath
# keeps the cache valid for every clone, wherever it is.
export GOFLAGS := -mod=vendor -trimpath
export CGO_ENABLED := 0

GO      ?= go
PKG     := github.com/bmlb/cluster-network-operator
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X $(PKG)/pkg/version.Version=$(VERSION)
BIN     := bin/cluster-network-operator
# The kubectl plugin: on the PATH, `kubectl metallb ...` runs it.
PLUGIN  := bin/kubectl-metallb
# -count=1: the tests drive external processes, which Go's test cache cannot see.
# -v: the output shows each test, and the control plane each one ran against.
TESTFLAGS ?= -count=1 -p 2 -timeout 30m -v
# RECAP runs go test -json, prints its output as -v does, and ends it with the
# failed tests' own lines again (the stories' pod logs left out): beside other
# stories, a failure is told long before the end of the output.
RECAP   := $(GO) run ./hack/testrecap -omit 'pod\.go:' --
# The end-to-end stories run side by side, each with a test network in a
# network world of its own (test/e2e/world), E2E_PARALLEL at once, the long
# ones first and those about time on an idle machine last, alone: each is a
# control plane and three nodes' pods, mostly waiting (probes, timers,
# rollouts). Four keep both cores busy (a load of 7-9) and the stories' bounds
# held; the machine's memory in use peaked at 3.5 GiB of the 24
# (docs/benchmarks.md, "Feedback").
E2E_PARALLEL ?= 4
# The package took 26 min in run 91; the crash stories (issue 45) add some 4.
E2E_TIMEOUT ?= 45m

# Where pkg/testenv finds etcd, kube-apiserver, kwok, MetalLB, ... (keyed by version).
export TESTENV_TOOLS_PATH := $(shell hack/tools.sh path)
CONTROLLER_GEN = $(shell hack/tools.sh path | tr : '\n' | grep controller-tools)/controller-gen
PROMTOOL = $(shell hack/tools.sh path | tr : '\n' | grep /prometheus-v)/promtool

.PHONY: all build build-operator tools test test-unit test-integration test-e2e test-faults test-crashes failover-figures soak verify generate-verify bench demo clean update-bindata generate debian-packages

all: build

## build: the operator and the kubectl plugin.
build: build-operator
	$(GO) build -ldflags "$(LDFLAGS)" -o $(PLUGIN) ./cmd/kubectl-metallb

build-operator:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/cluster-network-operator

## tools: build the test binaries from pinned modules into the cache (once per version).
tools:
	hack/tools.sh build

## test: every test, against real components: the packages' tests beside the
## end-to-end stories (they end minutes before the stories that run alone,
## which come last); each target's output shows when it ends.
test: tools debian-packages
	$(MAKE) --no-print-directory -j2 --output-sync=target test-integration test-e2e

## test-unit: the tests that need no control plane.
test-unit:
	$(GO) test $(TESTFLAGS) -short ./...

## test-integration: the packages' tests, against a real control plane, and
## those of hack/'s programs and of the docs.
test-integration: tools
	$(RECAP) $(GO) test $(TESTFLAGS) -json ./cmd/... ./pkg/... ./hack/... ./test/docs/...

## test-e2e: the operator binary driven through whole stories; as root also
## the stories with the real MetalLB binaries in network namespaces.
test-e2e: tools debian-packages
	@if [ "$$(id -u)" != 0 ]; then echo "NOTE: not root: the MetalLB stories (address, failover, upgrade, deactivate) need network namespaces and will SKIP"; fi
	$(RECAP) $(GO) test $(TESTFLAGS) -json -timeout $(E2E_TIMEOUT) -parallel $(E2E_PARALLEL) ./test/e2e/...

## failover-figures: layer-2 failover measured ten times per failure detection
## profile and family, as docs/benchmarks.md reports it (as root; about 10 min).
failover-figures: tools debian-packages
	$(GO) test $(TESTFLAGS) -run 'TestFailover$$' ./test/e2e/ -failover-runs=10

## soak: the Fast failure detection profile for 10 min under CPU starvation (as
## root; too long for make test).
SOAK_FOR ?= 10m
soak: tools debian-packages
	$(GO) test $(TESTFLAGS) -tags soak -run TestSoakFastProfile ./test/e2e/ -soak-for=$(SOAK_FOR)

## test-faults: the module's stories under injected faults (TestStoriesUnderFaults),
## run again and again with a random seed each time until FAULTS_MINUTES have
## passed or a run fails; its log names the seed, and `FAULT_SEED=N make
## test-faults` runs that one once. make test runs them with the seed 1.
FAULTS_MINUTES ?= 30
test-faults: tools
	@if [ -n "$$FAULT_SEED" ]; then exec $(GO) test $(TESTFLAGS) -run TestStoriesUnderFaults ./pkg/network/metallb/; fi; \
	end=$$(( $$(date +%s) + 60 * $(FAULTS_MINUTES) )); \
	while [ $$(date +%s) -lt $$end ]; do \
		FAULT_SEED=random $(GO) test $(TESTFLAGS) -run TestStoriesUnderFaults ./pkg/network/metallb/ || exit 1; \
	done

## test-crashes: the crash stories (test/e2e/crash_test.go) with the operator
## killed after every one of its writes, not the sample make test kills it
## after: a control plane for each kill, CRASH_PARALLEL stories at once (hours).
## CRASH_STORIES picks stories (a regexp of Activation, Upgrade, Adoption,
## BackendSwitch, Deactivation), CRASH_FROM the first write to kill after.
CRASH_PARALLEL ?= 2
CRASH_STORIES ?= .*
CRASH_FROM ?= 1
test-crashes: tools
	$(RECAP) $(GO) test $(TESTFLAGS) -json -timeout 8h -parallel $(CRASH_PARALLEL) -run '^TestCrash($(CRASH_STORIES))$$' ./test/e2e/ \
		-args -crash-every -crash-from $(CRASH_FROM)

## update-bindata: copy MetalLB's CRDs and native manifest from the pinned release.
update-bindata:
	hack/update-bindata.sh

# The MetalLB CRD, generated from pkg/apis: the operator creates it from bindata
# where it does not exist. The install manifests do not ship it: applied over
# another MetalLB operator's CRD, it would prune that operator's fields.
METALLB_CRD := bindata/metallb/011-crd-metallb.io_metallbs.yaml

# The upstream releases the operator follows, written from the pins under hack/tools.
RELEASE_VERSIONS := pkg/network/metallb/release/zz_generated.go

## generate: the API's generated code and CRD (controller-gen), and the
## releases pinned under hack/tools as Go constants.
generate:
	$(GO) run ./hack/release-versions
	hack/tools.sh build controller-tools
	$(CONTROLLER_GEN) object crd paths=./pkg/apis/... output:crd:dir=bin/crd
	cp bin/crd/metallb.io_metallbs.yaml $(METALLB_CRD)

## verify: formatting, vet, modules and vendor/ in step with go.mod, generated
## files and MetalLB's copied files up to date, install manifests in step with
## the code, no function over 60 lines, the pure packages importing no client,
## cache or clock (hack/walls) and the package graph of docs/architecture.md
## current, no tracked file over 1 MB outside vendor/, the alert rules valid
## (promtool).
verify: generate-verify
	hack/update-bindata.sh --verify
	hack/tools.sh build prometheus
	$(PROMTOOL) check rules bindata/alerts/*.rules.yaml
	$(GO) test -short -count=1 -run TestInstallManifestsAgreeWithTheCode ./cmd/cluster-network-operator
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^vendor/')); \
	  if [ -n "$$out" ]; then echo "gofmt wants to change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOFLAGS=-mod=mod $(GO) mod tidy -diff
	GOFLAGS=-mod=mod $(GO) mod verify
	hack/verify-vendor.sh
	@for d in hack/tools/*/; do (cd $$d && GOFLAGS=-mod=mod $(GO) mod tidy -diff) || exit 1; done
	$(GO) run ./hack/funclen -max 60 cmd pkg hack test
	$(GO) run ./hack/walls
	$(GO) run ./hack/walls -doc docs/architecture.md
	@big=$$(git ls-files -z ':!:vendor/' | xargs -0 stat -c '%s %n' | awk '$$1 > 1048576'); \
	  if [ -n "$$big" ]; then echo "tracked files over 1 MB outside vendor/ (build outputs belong in .gitignore):"; echo "$$big"; exit 1; fi

# generate-verify fails when `make generate` would change anything.
generate-verify: generate
	@out=$$(git diff --name-only -- pkg/apis $(METALLB_CRD) $(RELEASE_VERSIONS); git ls-files --others --exclude-standard -- pkg/apis $(METALLB_CRD) $(RELEASE_VERSIONS)); \
	  if [ -n "$$out" ]; then echo "generated files were stale (now regenerated; add them):"; echo "$$out"; exit 1; fi

## bench: the benchmarks; figures go to docs/benchmarks.md.
bench: tools
	$(GO) test -count=1 -run '^$$' -bench . -benchmem ./...

.PHONY: bench-binary
## bench-binary: the built binary's activation and memory, default flags, the node-address mode's memory and pace, the floor of its stack, and an upgrade on 2,000 nodes (hack/activation-bench, hack/memory-bench, hack/memory-floor, hack/rollout-bench).
bench-binary: build tools
	@status=0; \
	  $(GO) run ./hack/activation-bench -binary $(BIN) || status=1; \
	  $(GO) run ./hack/memory-bench -binary $(BIN) -idle 150s || status=1; \
	  $(GO) run ./hack/memory-bench -binary $(BIN) -node-address || status=1; \
	  $(GO) run ./hack/memory-floor -binary $(BIN) || status=1; \
	  $(GO) run ./hack/rollout-bench -binary $(BIN) || status=1; \
	  exit $$status

## demo: the operator's story on a local control plane, with the real MetalLB
## answering ARP in network namespaces (needs root); Ctrl-C stops it. It builds
## only the test binaries the demo runs (the control plane, kwok, MetalLB and
## its previous release, which the demo's hand install runs) and installs only
## iproute2.
DEMO_TOOLS := etcd kube kwok metallb metallb-previous
demo: build-operator
	hack/tools.sh build $(DEMO_TOOLS)
	@hack/debian-packages.sh iproute2
	$(GO) run ./hack/demo --operator $(BIN)

# debian-packages: `ip` (iproute2) makes the test network's namespaces, bridge
# and veths; FRR (frr) is the BGP stories' router. Installed from Debian when
# missing.
debian-packages:
	@hack/debian-packages.sh

clean:
	rm -rf bin
