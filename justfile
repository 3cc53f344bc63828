# Developer recipes. The README's two commands never need just.

default: test

build:
    go build -o bin/solopi ./cmd/solopi

test:
    go test ./...

# Interop tests against Debian's real adb server (apt-get install adb).
interop:
    go test -count=1 -tags interop -run Interop ./...

bench:
    go test -run '^$' -bench . -benchmem ./...
    go test -run '^$' -tags interop -bench . -benchmem ./solopi/adb/

# Short fuzzing pass over every fuzz target (FUZZTIME=30s by default).
fuzz FUZZTIME="30s":
    #!/usr/bin/env bash
    set -euo pipefail
    for pkg in $(go list ./...); do
      for f in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
        # Go minimizes each new interesting input for up to 60 s by default,
        # which stalls targets whose seeds are whole evidence files (report's
        # FuzzRender ran 13 inputs in 15 s); 20 runs per input keep them
        # fuzzing at their speed.
        echo "fuzz $pkg $f"; go test -run '^$' -fuzz "^$f\$" -fuzztime {{FUZZTIME}} -fuzzminimizetime 20x "$pkg"
      done
    done

lint:
    test -z "$(gofmt -l $(git ls-files '*.go'))"
    go vet ./...
    go vet -tags interop ./...

demo:
    go run ./cmd/solopi demo

ci:
    bash .ci/run
