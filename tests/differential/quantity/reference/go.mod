// The reference side of the Quantity differential test (../run.sh): k8s.io/apimachinery at the version of
// the e2e control plane (tests/e2e/tools/k8s), so both share the module cache.
module gpuadmit.io/differential/quantity

go 1.25.0

require k8s.io/apimachinery v0.35.4

require (
	github.com/fxamacker/cbor/v2 v2.9.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
)
