// Command benchpair runs two benchmarks of one test binary in turn, A B A B
// ..., one short run each, so that the machine's load moves on both alike,
// and prints each pair's ns/op and ratio A/B, then the ratios' minimum,
// median and maximum. A benchmark's sub-benchmarks run one after the other
// inside one process, so a load that changes in between skews a ratio taken
// from one run; pairs of short runs do not. Build the test binary first:
//
//	go test -c -o /tmp/autopost.test ./autopost/
//	go run ./scripts/benchpair -bin /tmp/autopost.test -a 'GuildEvent/create/lazy$' -b 'GuildEvent/floor$'
//
//	go test -c -o /tmp/topgg.test ./topgg/
//	go run ./scripts/benchpair -bin /tmp/topgg.test -a 'LegacyHasVoted/client$' -b 'LegacyHasVoted/floor$'
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

func main() {
	bin := flag.String("bin", "", "test binary (go test -c)")
	a := flag.String("a", "", "-test.bench pattern of A (must match one benchmark)")
	b := flag.String("b", "", "-test.bench pattern of B, the floor")
	pairs := flag.Int("n", 10, "pairs")
	benchtime := flag.String("benchtime", "300ms", "-test.benchtime of each run")
	flag.Parse()
	if *bin == "" || *a == "" || *b == "" || *pairs < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchpair -bin TEST_BINARY -a PATTERN -b PATTERN [-n PAIRS] [-benchtime D]")
		os.Exit(2)
	}
	var ratios []float64
	for i := range *pairs {
		var ns [2]float64
		for k := range 2 {
			side := (i + k) % 2 // who goes first alternates
			v, err := run(*bin, []string{*a, *b}[side], *benchtime)
			if err != nil {
				fmt.Fprintln(os.Stderr, "benchpair:", err)
				os.Exit(1)
			}
			ns[side] = v
		}
		ratios = append(ratios, ns[0]/ns[1])
		fmt.Printf("pair %d: A %.1f ns/op, B %.1f ns/op, A/B %.2fx\n", i+1, ns[0], ns[1], ns[0]/ns[1])
	}
	slices.Sort(ratios)
	fmt.Printf("A/B over %d pairs: %.2fx to %.2fx, median %.2fx\n", len(ratios), ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2])
}

// run runs one benchmark once and returns its ns/op.
func run(bin, pattern, benchtime string) (float64, error) {
	out, err := exec.Command(bin, "-test.run", "^$", "-test.bench", pattern, "-test.benchtime", benchtime, "-test.benchmem").Output()
	if err != nil {
		return 0, fmt.Errorf("%s -test.bench %s: %w", bin, pattern, err)
	}
	var found []float64
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f[0], err)
		}
		found = append(found, v)
	}
	if len(found) != 1 {
		return 0, errors.New("pattern " + pattern + " must match exactly one benchmark; matched " + strconv.Itoa(len(found)))
	}
	return found[0], nil
}
