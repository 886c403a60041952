// This file: reads Prometheus' text exposition in tests: what
// prometheus/testutil formats from a collector ([MetricsText]), or the body of a
// /metrics answer. Series are named as the text writes them:
// name{a="x",b="y"}, labels sorted by name ([MetricSeries] builds that).

package testkit

import (
	"iter"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

// MetricsText returns the families names of reg (all of them without names)
// in the text format, failing t if reg cannot gather them (a pedantic registry
// also checks their consistency).
func MetricsText(t testing.TB, reg prometheus.Gatherer, names ...string) string {
	t.Helper()
	if len(names) == 0 {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatalf("promtest: gather: %v", err)
		}
		for _, f := range fams {
			names = append(names, f.GetName())
		}
	}
	b, err := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain, names...)
	if err != nil {
		t.Fatalf("promtest: gather: %v", err)
	}
	return string(b)
}

// MetricSeries returns the text form of the series of name with labels.
func MetricSeries(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+strconv.Quote(labels[k]))
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// MetricValue returns the value of series in text (for a histogram, name it
// name_count{...} for its count), and whether text has it.
func MetricValue(text, series string) (float64, bool) {
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		return v, err == nil
	}
	return 0, false
}

var (
	seriesLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

// MetricLabels yields the name and the labels of every series line of text.
func MetricLabels(text string) iter.Seq2[string, map[string]string] {
	return func(yield func(string, map[string]string) bool) {
		for line := range strings.Lines(text) {
			m := seriesLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			labels := map[string]string{}
			for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
				labels[p[1]] = p[2]
			}
			if !yield(m[1], labels) {
				return
			}
		}
	}
}
