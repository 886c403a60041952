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
		hi, lo := bits.Mul64(v, 10)
		lo, carry := bits.Add64(lo, d, 0)
		if hi != 0 || carry != 0 {
			return 0, false
		}
		v = lo
	}
	return v, v != 0
}
