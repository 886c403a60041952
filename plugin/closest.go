package plugin

// closest returns the name of known nearest to name, "" when none is within
// a third of name's length of edits: the likely intent of a typo.
func closest(name string, known []string) string {
	best, bestD := "", len(name)/3+1
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := range len(a) {
		cur := make([]int, len(b)+1)
		cur[0] = i + 1
		for j := range len(b) {
			cost := 1
			if a[i] == b[j] {
				cost = 0
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, prev[j]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// didYouMean is " (did you mean X?)" for the known name closest to name, or "".
func didYouMean(name string, known []string) string {
	if c := closest(name, known); c != "" {
		return " (did you mean " + c + "?)"
	}
	return ""
}
