// Tools module: builds gojq for the GitOps diff-rule test (tests/gitops/build-gojq.sh), the jq that Argo CD
// runs its ignoreDifferences jqPathExpressions with (argo-cd v3.5.1's go.mod pins github.com/itchyny/gojq
// v0.12.19). Kept apart from the other tools modules so their graphs never change each other. Never
// `go get -u` here: bump github.com/itchyny/gojq to the version Argo CD pins and tidy.
module gpuadmit/tests/gitops/tools/gojq

go 1.26.0

tool github.com/itchyny/gojq/cmd/gojq

require (
	github.com/clipperhouse/stringish v0.1.1 // indirect
	github.com/clipperhouse/uax29/v2 v2.3.0 // indirect
	github.com/itchyny/go-yaml v0.0.0-20251001235044-fca9a0999f15 // indirect
	github.com/itchyny/gojq v0.12.19 // indirect
	github.com/itchyny/timefmt-go v0.1.8 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.19 // indirect
	golang.org/x/sys v0.38.0 // indirect
)
