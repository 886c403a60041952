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

// appendTime appends t as 8 bytes that order as unsigned big-endian, negative times too.
func appendTime(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(t.UnixNano())^(1<<63))
}

func getTime(b []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)^(1<<63))).UTC()
}

func encodeVote(v voterewards.Vote) []byte {
	var h voterewards.Hook
	if v.Hook != nil {
		h = *v.Hook
	}
	b := appendTime(appendTime(append(make([]byte, 0, 128), codecVersion), v.CreatedAt), v.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(max(v.Weight, 0)))
	b = append(appendString(appendString(b, v.UserID), v.PlatformID), byte(v.Origin))
	// A Hook with no id and no query encodes as no Hook.
	b = binary.AppendUvarint(appendString(b, h.ID), uint64(len(h.Query)))
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

// voteExpires reads the ExpiresAt of an encoded vote (every codec version
// starts with its version byte, CreatedAt and ExpiresAt) without decoding it.
func voteExpires(b []byte) (time.Time, bool) {
	if len(b) < 17 {
		return time.Time{}, false
	}
	return getTime(b[9:17]), true
}

func decodeVote(b []byte) (voterewards.Vote, error) {
	return decode(b, func(d *decoder) voterewards.Vote {
		version := d.byte()
		v := voterewards.Vote{Origin: voterewards.OriginHistory}
		v.CreatedAt, v.ExpiresAt = d.time(), d.time()
		v.Weight, v.UserID, v.PlatformID = int(d.uvarint(1<<31)), d.string(), d.string()
		if version < codecV1 || version > codecVersion {
			d.bad = true
		}
		if version >= codecV2 {
			if v.Origin = voterewards.Origin(d.byte()); v.Origin < voterewards.OriginHistory || v.Origin > voterewards.OriginWebhookV0 {
				d.bad = true
			}
			v.Hook = d.hook()
		}
		if version >= codecVersion {
			switch d.byte() { // the Stats' flag
			case 0:
			case 1:
				v.Stats = d.stats(d.string())
			default:
				d.bad = true
			}
		}
		return v
	})
}

// decoder reads a record's fields; once one is bad (bad set), the rest are zero.
type decoder struct {
	b   []byte
	bad bool
}

// decode reads b whole with read, or fails with errBadRecord.
func decode[T any](b []byte, read func(*decoder) T) (T, error) {
	d := decoder{b: b}
	x := read(&d)
	if d.bad || len(d.b) != 0 {
		var zero T
		return zero, errBadRecord
	}
	return x, nil
}

// hook reads a vote's Hook: no id and no query is none.
func (d *decoder) hook() *voterewards.Hook {
	h := voterewards.Hook{ID: d.string()}
	if q := d.uvarint(maxQuery); q > 0 && !d.bad {
		h.Query = make(map[string]string, q)
		for range q {
			k := d.string()
			h.Query[k] = d.string()
		}
	}
	if h.ID == "" && h.Query == nil {
		return nil
	}
	return &h
}

// take returns the next n bytes, or nil once the record is bad.
func (d *decoder) take(n uint64) []byte {
	if d.bad || uint64(len(d.b)) < n {
		d.bad = true
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) byte() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) time() time.Time {
	if b := d.take(8); b != nil {
		return getTime(b)
	}
	return time.Time{}
}

func (d *decoder) string() string { return string(d.take(d.uvarint(maxIDLen))) }

func (d *decoder) uvarint(limit uint64) uint64 {
	x, n := binary.Uvarint(d.b)
	if d.bad || n <= 0 || x > limit {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return x
}

// voter is the id a vote is deduplicated and counted on (PlatformID, else UserID).
func voter(v voterewards.Vote) string { return voterewards.Stats{}.Add(v, 0).UserID }

// timeKey is t, then id: a vote's key in pending (seenKey), a voter's in
// the months bucket.
func timeKey(t time.Time, id string) []byte {
	return append(appendTime(make([]byte, 0, 8+len(id)), t), id...)
}

// seenKey is a vote's key in pending (and version 3's dedup set): creation time, voter id.
func seenKey(v voterewards.Vote) []byte { return timeKey(v.CreatedAt, voter(v)) }

// appendVoterKey appends a vote's key in the voters bucket: the voter id, its
// length first (no id a prefix of another's keys), then the creation time.
func appendVoterKey(b []byte, id string, created time.Time) []byte {
	return appendTime(appendString(b, id), created)
}

// ledgerKey is a voter's ledger record's key in the voters bucket: its
// votes' keys without the time, so the record sorts just before them.
func ledgerKey(id string) []byte { return appendString(make([]byte, 0, 2+len(id)), id) }

// isVoteKey reports whether k, a key of the voters bucket, is a vote's (else a ledger record's).
func isVoteKey(k []byte) bool {
	n, l := binary.Uvarint(k)
	return l > 0 && n <= maxIDLen && uint64(len(k)-l) == n+8
}

// expiryKey orders pending expiries by ExpiresAt.
func expiryKey(v voterewards.Vote) []byte {
	id := voter(v)
	return append(appendTime(appendTime(make([]byte, 0, 16+len(id)), v.ExpiresAt), v.CreatedAt), id...)
}
