// dracelref: k8s.io/dynamic-resource-allocation/cel, the code the scheduler runs on DRA device selectors,
// as the reference for gpuadmit's policy::evaluate (tests/differential/dracel/run.sh compares the two).
//
//	dracelref < CASES.jsonl    per case {"expression": ..., "device": {...}}, one JSON line:
//	                           {"compile_error": "..."} or {"result": true|false} or {"error": "..."}
//
// A device is {"driver": "...", "allowMultipleAllocations": bool, "attributes": {NAME: DeviceAttribute},
// "capacity": {NAME: DeviceCapacity}} with resource.k8s.io/v1's JSON for the values, so cases read as
// ResourceSlices do. The compiler is the StoredExpressions environment with DRAConsumableCapacity on, as an
// API server that has stored the claim evaluates it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	resourceapi "k8s.io/api/resource/v1"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

type device struct {
	Driver                   string                                                 `json:"driver"`
	AllowMultipleAllocations *bool                                                  `json:"allowMultipleAllocations"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity"`
}

type input struct {
	Expression string `json:"expression"`
	Device     device `json:"device"`
}

type output struct {
	CompileError *string `json:"compile_error,omitempty"`
	Result       *bool   `json:"result,omitempty"`
	Error        *string `json:"error,omitempty"`
}

func main() {
	compiler := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for in.Scan() {
		var c input
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintf(os.Stderr, "bad case %q: %v\n", in.Text(), err)
			os.Exit(2)
		}
		var o output
		result := compiler.CompileCELExpression(c.Expression, dracel.Options{})
		if result.Error != nil {
			msg := result.Error.Error()
			o.CompileError = &msg
		} else {
			match, _, err := result.DeviceMatches(context.Background(), dracel.Device{
				Driver:                   c.Device.Driver,
				AllowMultipleAllocations: c.Device.AllowMultipleAllocations,
				Attributes:               c.Device.Attributes,
				Capacity:                 c.Device.Capacity,
			})
			if err != nil {
				msg := err.Error()
				o.Error = &msg
			} else {
				o.Result = &match
			}
		}
		if err := out.Encode(o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
