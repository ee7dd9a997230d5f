# dprepro — make targets. PROFILE=quick|paper, WORKERS=N, DATA=dir.
GO       ?= go
PROFILE  ?= quick
WORKERS  ?= $(shell nproc 2>/dev/null || echo 2)
# DATA names the data folder (--data-dir); empty leaves the binary's search
# order ($DPREPRO_DATA, else the per-user folder) in charge.
DATA     ?= $(DPREPRO_DATA)
DATAFLAG := $(if $(DATA),--data-dir $(DATA))
OUT      ?= results/runs
BIN      := bin/dprepro

.PHONY: all build test test-short vet fmt reproduce quick paper data verify-data bench clean references check audit audit-thorough mutants

all: build

build:
	$(GO) build -buildvcs=true -o $(BIN) ./cmd/dprepro

# The test command of the README: vet, format check and the whole test suite
# against the real data in $(DATA).
test:
	DPREPRO_DATA=$(abspath $(or $(DATA),../shared/datasets)) scripts/test.sh

test-short:
	DPREPRO_DATA=$(abspath $(or $(DATA),../shared/datasets)) $(GO) test -short ./...

# Every spec under experiments/ at PROFILE.
reproduce: build
	$(BIN) reproduce --profile $(PROFILE) --workers $(WORKERS) $(DATAFLAG) --out $(OUT)

quick:
	$(MAKE) reproduce PROFILE=quick

paper:
	$(MAKE) reproduce PROFILE=paper

# Refresh the reference results (quick profile) on purpose, and show the diff.
references:
	DPREPRO_DATA=$(abspath $(or $(DATA),../shared/datasets)) scripts/references.sh

# Compare the runs in OUT with the references.
check: build
	$(BIN) check $(OUT)

# Empirical privacy audit of every mechanism (experiments/audit.toml): the
# quick one runs in CI; the thorough one is the spec's paper profile.
audit: build
	$(BIN) audit --workers $(WORKERS) --out $(OUT)

audit-thorough: build
	$(BIN) audit --thorough --workers $(WORKERS) --out $(OUT)

# Mutation testing of privacy bugs (mutants/mutants.toml): each realistic
# bug applied alone to a copy of the tree, its tests run; writes
# mutants/report.md and fails when a mutant survives. Not part of CI.
mutants:
	DPREPRO_DATA=$(abspath $(or $(DATA),../shared/datasets)) $(GO) run ./internal/cmd/mutants -out mutants/report.md

# Download the real UCI files into DATA (checksums verified).
data: build
	$(BIN) data fetch $(DATAFLAG)

verify-data: build
	$(BIN) data verify $(DATAFLAG)

bench:
	DPREPRO_DATA=$(abspath $(or $(DATA),../shared/datasets)) $(GO) test -run '^$$' -bench . -benchmem ./core/... ./runner/... ./kinds/... ./methods/...

clean:
	rm -rf bin
