// The do-nothing webhook that tests/e2e/overhead.sh measures gpuadmit against. Standard library
// only, so it builds without the module proxy.
module gpuadmit.io/e2e/nullwebhook

go 1.22
