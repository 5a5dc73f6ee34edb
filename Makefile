# herd — build, run and test. `make run` and `make test` are the two
# commands a newcomer needs (see README.md).

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
WASM    := web/static/app.wasm
BIN     := bin/herd
# Sources the web app is built from; app.wasm is rebuilt when one changes.
WASM_SRC := $(shell find app shared cmd/wasm -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum

ADAPTERS := server/agent/adapters

.PHONY: run build wasm adapters test test-faults lint fuzz bench bench-load clean

## run: build the web app and the server, then serve on 127.0.0.1:8080 with a demo workspace
run: build
	./$(BIN) serve --adapters $(ADAPTERS)

## adapters: the pinned ACP adapters of Claude Code, Codex and Gemini CLI
## (server/agent/adapters/package-lock.json), installed with npm ci; the
## built-in profiles use them, and the real-agent tests need them
adapters: $(ADAPTERS)/node_modules/.package-lock.json

$(ADAPTERS)/node_modules/.package-lock.json: $(ADAPTERS)/package.json $(ADAPTERS)/package-lock.json
	npm ci --prefix $(ADAPTERS) --no-audit --no-fund

## build: the herd binary (embeds the web app)
build: wasm
	$(GO) build -trimpath -ldflags="$(LDFLAGS)" -o $(BIN) ./cmd/herd

## wasm: app.wasm plus its gzip and brotli siblings, served pre-compressed
wasm: $(WASM)

$(WASM): $(WASM_SRC)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -o $(WASM) ./cmd/wasm
	$(GO) run ./cmd/precompress $(WASM)

## test: lint, a short fuzz run of the protocol decoder, then every test with
## the race detector (PostgreSQL and Chromium tests skip visibly when
## unavailable, and fail instead when CI=true)
test: wasm lint
	$(MAKE) --no-print-directory fuzz FUZZTIME=500000x
	$(GO) test -race -count=1 -timeout 30m ./...

## test-faults: only the fault suite (cmd/herd/faults: kill -9 mid-stream,
## SIGTERM under load, agent crash, database outages, bad input, auth and
## origin), verbosely; its JSON report goes to artifacts/faults.json and is
## printed (figures in docs/benchmarks.md). It also runs inside `make test`.
test-faults:
	@mkdir -p artifacts && rm -f artifacts/faults.json
	HERD_FAULTS_REPORT=$(CURDIR)/artifacts/faults.json $(GO) test -race -count=1 -v ./cmd/herd/faults/; \
	status=$$?; cat artifacts/faults.json 2>/dev/null; exit $$status

## lint: gofmt and go vet, for the host and for GOOS=js GOARCH=wasm
lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./shared/... ./app/... ./cmd/wasm

# A count, not a duration: a -fuzztime duration can end in a spurious
# "context deadline exceeded" on Go 1.26 (golang/go#75804).
FUZZTIME ?= 3000000x
## fuzz: fuzz the protocol decoder
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeRequest$$' -fuzztime $(FUZZTIME) ./shared/

## bench: benchmarks (figures are recorded in docs/benchmarks.md)
bench: wasm
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-load: the load harness: a real server, mock agents and WebSocket
## clients on loopback; prints one JSON report (also written to
## artifacts/bench-load.json) with progress on stderr; about 3 minutes on
## 2 cores. BENCH_FLAGS passes flags to `herd bench` (see herd bench -h).
BENCH_FLAGS ?=
bench-load: build
	@mkdir -p artifacts
	./$(BIN) bench -out artifacts/bench-load.json $(BENCH_FLAGS)

clean:
	rm -rf bin $(WASM) $(WASM).gz $(WASM).br
