// Package readme_test keeps the README's Go snippets true: each is compiled
// code in readme_snippets_test.go (go vet and go test fail when one does not
// compile), and TestReadmeSnippetsAreCompiled fails when the README and that
// code differ.
package readme_test

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snippet is a block of Go code, named for the messages.
type snippet struct {
	name, code string
}

// TestReadmeSnippetsAreCompiled: every ```go block of the README is, word
// for word, a marked region of readme_snippets_test.go, and every region is
// in the README.
func TestReadmeSnippetsAreCompiled(t *testing.T) {
	t.Parallel()
	inReadme := fenced(t, read(t, "README.md"))
	compiled := compiledSnippets(t)
	shown := make(map[string]bool)
	for i, b := range inReadme {
		shown[b.code] = true
		if slices.ContainsFunc(compiled, func(s snippet) bool { return s.code == b.code }) {
			continue
		}
		if i < len(compiled) { // most likely edited in one place only: show the difference
			assert.Equal(t, compiled[i].code, b.code,
				"README.md's %s is not compiled code; the region %q of readme_snippets_test.go is the nearest: make the same edit in both", b.name, compiled[i].name)
			continue
		}
		assert.Fail(t, "a README snippet is not compiled",
			"README.md's %s is no marked region of readme_snippets_test.go:\n%s", b.name, b.code)
	}
	for _, s := range compiled {
		assert.True(t, shown[s.code], "the compiled snippet %q is not in README.md (or differs from it)", s.name)
	}
}

// TestPluginDocShowsTheReadmeBot: go doc of the plugin package shows the
// README's first bot (example-bot/minimal), word for word.
func TestPluginDocShowsTheReadmeBot(t *testing.T) {
	t.Parallel()
	var bot string
	for _, s := range compiledSnippets(t) {
		if s.name == "plugin" {
			bot = s.code
		}
	}
	require.NotEmpty(t, bot)
	var doc strings.Builder
	for line := range strings.Lines(read(t, "plugin/doc.go")) {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok {
			doc.WriteString(rest)
		} else if line == "//\n" {
			doc.WriteString("\n")
		}
	}
	assert.Contains(t, doc.String(), bot, "plugin/doc.go's code block is not the README's plugin snippet")
}

// compiledSnippets are the marked regions of the compiled sources: the
// README's first bot is the minimal bot's own code, the rest are in
// readme_snippets_test.go.
func compiledSnippets(t *testing.T) []snippet {
	return append(marked(t, read(t, "example-bot/minimal/main.go")), marked(t, read(t, "readme_snippets_test.go"))...)
}

var goFence = regexp.MustCompile("(?ms)^```go\n(.*?)^```\n")

// fenced returns the ```go blocks of a Markdown text.
func fenced(t *testing.T, md string) []snippet {
	t.Helper()
	var out []snippet
	for _, m := range goFence.FindAllStringSubmatchIndex(md, -1) {
		line := strings.Count(md[:m[0]], "\n") + 1
		out = append(out, snippet{name: "block at line " + strconv.Itoa(line), code: md[m[2]:m[3]]})
	}
	require.NotEmpty(t, out, "no ```go block found")
	return out
}

// marked returns the regions of src between "// readme:begin NAME" and
// "// readme:end", without the markers and with their common indentation
// removed.
func marked(t *testing.T, src string) []snippet {
	t.Helper()
	var out []snippet
	var cur *snippet
	var lines []string
	for line := range strings.Lines(src) {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "// readme:begin "):
			require.Nil(t, cur, "readme:begin inside a region")
			cur, lines = &snippet{name: strings.TrimPrefix(trimmed, "// readme:begin ")}, nil
		case trimmed == "// readme:end":
			require.NotNil(t, cur, "readme:end outside a region")
			cur.code = dedent(lines)
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			lines = append(lines, line)
		}
	}
	require.Nil(t, cur, "a region has no readme:end")
	return out
}

// dedent joins lines without their common leading tabs, and without the
// blank lines at the end.
func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "\t")); common < 0 || n < common {
			common = n
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(l[max(common, 0):])
	}
	return b.String()
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}
