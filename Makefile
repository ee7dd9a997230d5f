# dprepro — make targets. PROFILE=quick|paper, WORKERS=N, DATA=dir.
GO       ?= go
PROFILE  ?= quick
WORKERS  ?= $(shell nproc 2>/dev/null || echo 2)
DATA     ?= $(or $(DPREPRO_DATA),../shared/datasets)
OUT      ?= results/runs
BIN      := bin/dprepro

.PHONY: all build test test-short vet fmt reproduce quick paper data verify-data bench clean references check audit audit-thorough

all: build

build:
	$(GO) build -o $(BIN) ./cmd/dprepro

# The test command of the README: vet, format check and the whole test suite
# against the real data in $(DATA).
test:
	DPREPRO_DATA=$(abspath $(DATA)) scripts/test.sh

test-short:
	DPREPRO_DATA=$(abspath $(DATA)) $(GO) test -short ./...

# Every spec under experiments/ at PROFILE.
reproduce: build
	$(BIN) reproduce --profile $(PROFILE) --workers $(WORKERS) --data-dir $(DATA) --out $(OUT)

quick:
	$(MAKE) reproduce PROFILE=quick

paper:
	$(MAKE) reproduce PROFILE=paper

# Refresh the reference results (quick profile) on purpose, and show the diff.
references:
	DPREPRO_DATA=$(abspath $(DATA)) scripts/references.sh

# Compare the runs in OUT with the references.
check: build
	$(BIN) check $(OUT) --against results/reference

# Empirical privacy audit of every mechanism (experiments/audit.toml): the
# quick one runs in CI; the thorough one is the spec's paper profile.
audit: build
	$(BIN) audit --workers $(WORKERS) --out $(OUT)

audit-thorough: build
	$(BIN) audit --thorough --workers $(WORKERS) --out $(OUT)

# Download the real UCI files into DATA (checksums verified).
data: build
	$(BIN) data fetch --data-dir $(DATA)

verify-data: build
	$(BIN) data verify --data-dir $(DATA)

bench:
	DPREPRO_DATA=$(abspath $(DATA)) $(GO) test -run '^$$' -bench . -benchmem ./core/... ./internal/...

clean:
	rm -rf bin
