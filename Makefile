# Thin aliases over cargo, so that the README's commands stay short.
.PHONY: setup build run test test-deep bench lint fmt

CARGO ?= cargo

# Everything the tests need beyond cargo: the cshogi oracle (PyPI) and nats-server (Debian).
setup:
	bash tools/setup.sh

build:
	$(CARGO) build --release --workspace

# The arbiter's CLI; pass a subcommand with ARGS="...".
run:
	$(CARGO) run --release -p shogi-arbiter -- $(ARGS)

test: setup
	$(CARGO) test --workspace --locked

# Deep perft rows (hundreds of millions of nodes) and the long proptest runs: by hand, not in CI.
test-deep:
	SHOGI_DEEP_PERFT=1 PROPTEST_CASES=2000 $(CARGO) test --release -p shogi-rules -- --nocapture

bench:
	$(CARGO) bench -p shogi-rules

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all
