package autopost

import "math/bits"

// parseSnowflake parses a decimal snowflake, faster than strconv.ParseUint
// for this one case; it rejects 0, signs, and values over 64 bits.
func parseSnowflake(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if d > 9 {
			return 0, false
		}
		if i < 19 { // 19 digits fit in a uint64: no overflow check (most of the event's parse time)
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
