package autopost

import "math/bits"

// guildTable maps guild ids to packed values (see pack). It is an open
// addressing hash table with linear probing, because the hot path needs one
// probe that both finds a guild and updates it in place, where a Go map costs
// a lookup and an assignment, each several times slower than this probe.
//
// A snowflake is never 0, so key 0 marks an empty slot. Entries are never
// deleted one by one (a removed guild stays as a tombstone value), so probing
// needs no deletion markers; rebuild drops entries wholesale. Guild ids are
// chosen by Discord, not by users, so the simple multiplicative hash cannot be
// steered into collisions.
type guildTable struct {
	slots []slot // a power of two long, or nil
	shift uint   // 64 - log2(len(slots))
	used  int
}

type slot struct{ key, val uint64 }

// newGuildTable returns a table that holds n guilds without growing.
func newGuildTable(n int) guildTable {
	size := 8
	for size*3 < n*4 {
		size *= 2
	}
	return guildTable{slots: make([]slot, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
}

// lookup returns the slot of key, or the empty slot where key would go.
func (t *guildTable) lookup(key uint64) *slot {
	mask := uint64(len(t.slots) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> t.shift; ; i = (i + 1) & mask {
		if s := &t.slots[i]; s.key == key || s.key == 0 {
			return s
		}
	}
}

// insert stores a key that lookup did not find in the empty slot s it
// returned, growing the table first if it is three quarters full.
func (t *guildTable) insert(s *slot, key, val uint64) {
	if (t.used+1)*4 > len(t.slots)*3 {
		t.rebuild(2*t.used, nil)
		s = t.lookup(key)
	}
	s.key, s.val = key, val
	t.used++
}

// rebuild copies the entries that keep accepts (all if keep is nil) into a
// table sized for n entries. It runs on growth and sweeps only.
func (t *guildTable) rebuild(n int, keep func(val uint64) bool) {
	old := t.slots
	*t = newGuildTable(n)
	for _, s := range old {
		if s.key != 0 && (keep == nil || keep(s.val)) {
			d := t.lookup(s.key)
			d.key, d.val = s.key, s.val
			t.used++
		}
	}
}

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
