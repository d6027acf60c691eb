// quantityref: k8s.io/apimachinery's resource.Quantity as the reference for gpuadmit's k8s::Quantity
// (tests/differential/quantity/run.sh compares the two).
//
//	quantityref literals FILE   every string literal of a Go file (apimachinery's quantity_test.go), hex, one per line
//	quantityref < INPUTS        per hex-encoded input line, what Kubernetes makes of it:
//	                            "ok <nanos> <canonical> <cmp>", "err" or "skip"
//
// An input is read as Quantity.UnmarshalJSON reads a JSON string: ParseQuantity(strings.TrimSpace(s)).
// <nanos> is the exact value in nano-units, <canonical> what String() writes for that value, and <cmp>
// Cmp against the last accepted input (-1, 0, 1; 0 on the first). "skip": an exponent above 20,000 in
// magnitude, on which ParseQuantity runs for minutes (gpuadmit rejects those as out of range).
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"go/scanner"
	"go/token"
	"math/big"
	"os"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

var hugeExponent = regexp.MustCompile(`[eE][+-]?0*[0-9]{6,}$|[eE][+-]?0*([2-9][0-9]{4})$`)

func literals(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile(path, fset.Base(), len(src)), src, nil, 0)
	seen := map[string]bool{}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return nil
		}
		if tok != token.STRING {
			continue
		}
		text, err := strconv.Unquote(lit)
		if err != nil || seen[text] || strings.Contains(text, "\n") {
			continue
		}
		seen[text] = true
		fmt.Fprintln(out, hex.EncodeToString([]byte(text)))
	}
}

func nanos(q resource.Quantity) string {
	d := q.AsDec()
	value := new(big.Int).Set(d.UnscaledBig())
	scale := int(d.Scale())
	if value.Sign() == 0 {
		return "0"
	}
	if scale > 9 {
		return "scale>9"
	}
	value.Mul(value, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(9-scale)), nil))
	return value.String()
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "literals" {
		if err := literals(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var last *resource.Quantity
	for in.Scan() {
		raw, err := hex.DecodeString(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad hex line:", in.Text())
			os.Exit(1)
		}
		text := strings.TrimSpace(string(raw))
		if hugeExponent.MatchString(text) {
			fmt.Fprintln(out, "skip")
			continue
		}
		value, err := resource.ParseQuantity(text)
		if err != nil {
			fmt.Fprintln(out, "err")
			continue
		}
		// Each figure from its own parse: AsDec converts a Quantity in place, and a parsed Quantity keeps
		// the input as its text when it already looks canonical; Add clears that, so String() writes it.
		canonical, _ := resource.ParseQuantity(text)
		canonical.Add(resource.Quantity{Format: canonical.Format})
		cmp := 0
		fresh, _ := resource.ParseQuantity(text)
		if last != nil {
			cmp = fresh.Cmp(*last)
		}
		last = &fresh
		fmt.Fprintf(out, "ok %s %s %d\n", nanos(value), canonical.String(), cmp)
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
