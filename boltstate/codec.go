package boltstate

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/dblkit/go-topgg/voterewards"
)

// The state file's votes, in a binary form (decoded for every vote at start,
// and easy to bound-check), a string being len(uvarint) bytes:
//
//	v1: version(1) created(8) expires(8) weight(uvarint) user_id platform_id
//	v2: v1 + origin(1) id query_len(uvarint) (key value)*query_len
//	v3: v2 + the vote's Stats (codec_ledger.go)
const (
	codecV1      = 1
	codecV2      = 2
	codecVersion = 3
)

// maxIDLen and maxQuery bound a record's ids, query strings and entries, at
// least as far as voterewards' sanitize.
const maxIDLen, maxQuery = 1 << 10, 32

var errBadRecord = errors.New("damaged vote record")

// putTime orders times as unsigned big-endian bytes, negative ones too.
func putTime(b []byte, t time.Time) { binary.BigEndian.PutUint64(b, uint64(t.UnixNano())^(1<<63)) }

func getTime(b []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)^(1<<63))).UTC()
}

func encodeVote(v voterewards.Vote) []byte {
	var h voterewards.Hook
	if v.Hook != nil {
		h = *v.Hook
	}
	n := 18 + 5*binary.MaxVarintLen64 + len(v.UserID) + len(v.PlatformID) + len(h.ID) + statsLen + len(v.Stats.UserID)
	for k, val := range h.Query {
		n += 2*binary.MaxVarintLen64 + len(k) + len(val)
	}
	b := make([]byte, 17, n)
	b[0] = codecVersion
	putTime(b[1:9], v.CreatedAt)
	putTime(b[9:17], v.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(max(v.Weight, 0)))
	b = appendString(b, v.UserID)
	b = appendString(b, v.PlatformID)
	b = append(b, byte(v.Origin))
	// A Hook with no id and no query encodes as no Hook.
	b = appendString(b, h.ID)
	b = binary.AppendUvarint(b, uint64(len(h.Query)))
	// Sorted, so that one vote always encodes to the same bytes.
	if len(h.Query) > 0 {
		for _, k := range slices.Sorted(maps.Keys(h.Query)) {
			b = appendString(appendString(b, k), h.Query[k])
		}
	}
	return appendVoteStats(b, v.Stats)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func decodeVote(b []byte) (voterewards.Vote, error) {
	if len(b) < 17 || b[0] < codecV1 || b[0] > codecVersion {
		return voterewards.Vote{}, errBadRecord
	}
	v := voterewards.Vote{Origin: voterewards.OriginHistory}
	v.CreatedAt, v.ExpiresAt = getTime(b[1:9]), getTime(b[9:17])
	d := decoder{b: b[17:]}
	w := d.uvarint(1 << 31)
	v.Weight, v.UserID, v.PlatformID = int(w), d.string(), d.string()
	if b[0] >= codecV2 {
		d.v2(&v)
	}
	if b[0] >= codecVersion {
		d.v3(&v)
	}
	if d.bad || len(d.b) != 0 {
		return voterewards.Vote{}, errBadRecord
	}
	return v, nil
}

// decoder reads a record's fields; once one is bad (bad set), the rest are zero.
type decoder struct {
	b   []byte
	bad bool
}

// v2 reads the fields version 2 added.
func (d *decoder) v2(v *voterewards.Vote) {
	if len(d.b) < 1 || d.b[0] < byte(voterewards.OriginHistory) || d.b[0] > byte(voterewards.OriginWebhookV0) {
		d.bad = true
		return
	}
	v.Origin, d.b = voterewards.Origin(d.b[0]), d.b[1:]
	h := voterewards.Hook{ID: d.string()}
	if q := d.uvarint(maxQuery); q > 0 && !d.bad {
		h.Query = make(map[string]string, q)
		for range q {
			k := d.string()
			h.Query[k] = d.string()
		}
	}
	if h.ID != "" || h.Query != nil {
		v.Hook = &h
	}
}

func (d *decoder) uvarint(limit uint64) uint64 {
	x, n := binary.Uvarint(d.b)
	if d.bad || n <= 0 || x > limit {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) string() string {
	l := d.uvarint(maxIDLen)
	if d.bad || uint64(len(d.b)) < l {
		d.bad = true
		return ""
	}
	s := string(d.b[:l])
	d.b = d.b[l:]
	return s
}

// voter is the id a vote is deduplicated and counted on (PlatformID, else UserID).
func voter(v voterewards.Vote) string { return voterewards.Stats{}.Add(v, 0).UserID }

// seenKey is a vote's key in the dedup set and pending: creation time, voter id.
func seenKey(v voterewards.Vote) []byte {
	id := voter(v)
	k := make([]byte, 8, 8+len(id))
	putTime(k, v.CreatedAt)
	return append(k, id...)
}

// voterKey is a vote's key in the per-voter index: the voter id, its length
// first (no id a prefix of another's keys), then the creation time.
func voterKey(id string, created time.Time) []byte {
	return appendVoterKey(make([]byte, 0, binary.MaxVarintLen64+len(id)+8), id, created)
}

// appendVoterKey appends the voterKey of id and created to b.
func appendVoterKey(b []byte, id string, created time.Time) []byte {
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	var t [8]byte
	putTime(t[:], created)
	return append(b, t[:]...)
}

// expiryKey orders pending expiries by ExpiresAt.
func expiryKey(v voterewards.Vote) []byte {
	id := voter(v)
	k := make([]byte, 16, 16+len(id))
	putTime(k, v.ExpiresAt)
	putTime(k[8:], v.CreatedAt)
	return append(k, id...)
}
