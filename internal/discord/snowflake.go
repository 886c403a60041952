// Package discord reads Discord ids (snowflakes), the one place the module parses,
// checks, orders and routes them, answers whether a discordgo session was opened,
// and keeps its token out of the errors of its calls.
package discord

import "math/bits"

// maxDigits is the length of the largest 64-bit value, 18446744073709551615.
const maxDigits = 20

// Parse returns the value of a decimal id: digits only (no sign, no space),
// non-zero, fitting 64 bits. Leading zeros are accepted: the value is what
// counts (see [Valid] for the form Discord writes). It does not allocate, and
// is faster than strconv.ParseUint on the gateway's hot path.
func ParseID(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > maxDigits {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if d > 9 {
			return 0, false
		}
		if i < 19 { // 19 digits fit in a uint64: no overflow check (29% -> 21% of autopost's guild event)
			v = v*10 + d
			continue
		}
		hi, lo := bits.Mul64(v, 10)
		lo, carry := bits.Add64(lo, d, 0)
		if hi != 0 || carry != 0 {
			return 0, false
		}
		v = lo
	}
	return v, v != 0
}

// Valid reports an id as Discord writes it: [Parse] accepts it and it has no
// leading zero, so that "007" and "7" never name two things.
func ValidID(s string) bool {
	_, ok := ParseID(s)
	return ok && s[0] != '0'
}

// Compare orders valid ids numerically (a shorter id is a smaller one), for
// slices.SortFunc.
func CompareIDs(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Shard is Discord's routing rule: the shard, out of shardCount (at least 1),
// that receives the events of guild id: (id >> 22) % shardCount.
func ShardOf(id uint64, shardCount int) int {
	return int((id >> 22) % uint64(shardCount))
}
