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

.PHONY: all build test test-short vet fmt reproduce quick paper data verify-data bench benchcmp clean references check audit audit-thorough mutants

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

# Benchmarks of the hot paths (go test -bench), written to BENCHOUT; the
# file it replaces is kept as bench/previous.txt, so `make bench` before
# and after a change, then `make benchcmp`, compares them. BENCH selects
# benchmarks (a -bench regexp), BENCHPKGS packages, BENCHCOUNT the runs of
# each (benchstat wants >= 6 for confidence intervals). Benchmarks that
# need the real data read DPREPRO_DATA (set from DATA) and skip without it.
BENCH      ?= .
BENCHCOUNT ?= 1
BENCHPKGS  ?= ./core/... ./runner/... ./kinds/... ./methods/...
BENCHOUT   ?= bench/latest.txt
bench:
	@mkdir -p $(dir $(BENCHOUT))
	@if [ -f $(BENCHOUT) ]; then mv $(BENCHOUT) $(dir $(BENCHOUT))previous.txt; fi
	DPREPRO_DATA=$(abspath $(or $(DATA),../shared/datasets)) $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(BENCHCOUNT) $(BENCHPKGS) > $(BENCHOUT) 2>&1; \
	  status=$$?; cat $(BENCHOUT); echo "bench: wrote $(BENCHOUT)"; exit $$status

# Compare two `make bench` outputs with benchstat (golang.org/x/perf,
# pinned; fetched through the Go module proxy on first use).
BENCHSTAT ?= $(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
OLD ?= bench/previous.txt
NEW ?= bench/latest.txt
benchcmp:
	$(BENCHSTAT) $(OLD) $(NEW)

clean:
	rm -rf bin
