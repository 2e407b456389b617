# pqprof: `make run` measures and renders; `make test` runs the tests and the smoke run.
CARGO ?= cargo
BIN := target/release/pqprof
HOST := $(shell cat /proc/sys/kernel/hostname 2>/dev/null || echo host)
DATE := $(shell date -u +%Y-%m-%d)
OUT ?= results/$(HOST)-$(DATE).json

.PHONY: all build run test smoke deps clean

all: run

deps:
	./.ci/deps

build: deps
	$(CARGO) build --release --locked

run: build
	$(BIN) run --out $(OUT)
	$(BIN) check $(OUT)

test: build
	$(CARGO) test --release --locked
	./smoke/run.sh

smoke: build
	./smoke/run.sh

clean:
	$(CARGO) clean
