package shards

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// IDs is a list of shard IDs in increasing order, written as a SHARD_IDS
// variable: "0-3", "0,2,4", "0-1, 4-5". It is a go-envconfig Decoder; nil
// means every shard, as for [WithShardIDs].
type IDs []int

// EnvDecode is go-envconfig's Decoder: it reads IDs (decimal, no sign or
// leading zero, below 65,536) and ascending ranges, none listed twice; an
// empty v is nil, every shard. Errors quote the part they refuse.
func (ids *IDs) EnvDecode(v string) error {
	if v == "" {
		*ids = nil
		return nil
	}
	seen := make(map[int]bool)
	var out IDs
	for part := range strings.SplitSeq(v, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			hi = lo
		}
		first, err1 := parseID(lo)
		last, err2 := parseID(hi)
		if err := cmp.Or(err1, err2); err != nil {
			return err
		}
		if last < first {
			return fmt.Errorf("shards: range %d-%d ends before it starts", first, last)
		}
		for id := first; id <= last; id++ {
			if seen[id] {
				return fmt.Errorf("shards: shard %d is listed twice (overlapping ranges)", id)
			}
			seen[id] = true
			out = append(out, id)
		}
	}
	slices.Sort(out)
	*ids = out
	return nil
}

// String writes the list back as EnvDecode reads it, with runs as ranges.
func (ids IDs) String() string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			fmt.Fprintf(&b, "-%d", ids[j])
		}
		i = j + 1
	}
	return b.String()
}

// parseID reads one ID: decimal digits, no sign, no leading zero, below maxShards.
func parseID(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789") != "" || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("shards: %q is not a shard ID (want IDs and ranges such as 0-3 or 0,2,4)", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= maxShards {
		return 0, fmt.Errorf("shards: shard ID %s is above %d", s, maxShards-1)
	}
	return n, nil
}
