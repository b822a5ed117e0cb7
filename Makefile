# Thin aliases over cargo, so that the README's commands stay short.
.PHONY: setup build run test test-browser console console-check test-deep fuzz bench lint lint-proto fmt

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
	$(CARGO) test --workspace --locked
	$(MAKE) test-browser

# The browser console (web/console/): its pinned front-end toolchain from npm, the TypeScript
# generated from proto/ and the bundle the binaries embed. The built files are committed, so
# that cargo builds without npm; `console-check` fails when they differ from what the sources
# build.
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

# The shogi.v1 contracts, linted by buf (installed by setup from PyPI, buf-bin).
lint-proto:
	cd proto && buf lint
