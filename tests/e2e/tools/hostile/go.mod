// Hostile clients for tests/e2e/faults.sh. Standard library only, so it builds without the module proxy.
module gpuadmit.io/e2e/hostile

go 1.22
