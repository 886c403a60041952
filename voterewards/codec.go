package voterewards

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"time"
)

// The bolt store keeps votes in a small binary form rather than JSON: it is
// decoded for every vote at start and written for every vote read, and a fixed
// layout is easy to bound-check.
//
//	v1: version(1) created(8) expires(8) weight(uvarint) user_id platform_id
//	v2: v1 + origin(1) id query_len(uvarint) (key value)*query_len
//
// where a string is len(uvarint) bytes. Version 1 records (round one) decode
// as history votes.
const (
	codecV1      = 1
	codecVersion = 2
)

// maxIDLen bounds the ids (and query strings) a record may carry, so a
// damaged record cannot make the decoder allocate without limit.
const maxIDLen = 1 << 10

var errBadRecord = errors.New("damaged vote record")

// putTime orders times as unsigned big-endian bytes, negative ones too.
func putTime(b []byte, t time.Time) { binary.BigEndian.PutUint64(b, uint64(t.UnixNano())^(1<<63)) }

func getTime(b []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)^(1<<63))).UTC()
}

func encodeVote(v Vote) []byte {
	var h Hook
	if v.Hook != nil {
		h = *v.Hook
	}
	n := 18 + 5*binary.MaxVarintLen64 + len(v.UserID) + len(v.PlatformID) + len(h.ID)
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
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func decodeVote(b []byte) (Vote, error) {
	if len(b) < 17 || (b[0] != codecV1 && b[0] != codecVersion) {
		return Vote{}, errBadRecord
	}
	version := b[0]
	var v Vote
	v.CreatedAt = getTime(b[1:9])
	v.ExpiresAt = getTime(b[9:17])
	b = b[17:]
	w, n := binary.Uvarint(b)
	if n <= 0 || w > 1<<31 {
		return Vote{}, errBadRecord
	}
	v.Weight = int(w)
	b = b[n:]
	var err error
	if v.UserID, b, err = decodeString(b); err != nil {
		return Vote{}, err
	}
	if v.PlatformID, b, err = decodeString(b); err != nil {
		return Vote{}, err
	}
	v.Origin = OriginHistory
	if version == codecVersion {
		if b, err = decodeV2(&v, b); err != nil {
			return Vote{}, err
		}
	}
	if len(b) != 0 {
		return Vote{}, errBadRecord
	}
	return v, nil
}

// decodeV2 decodes the fields version 2 added.
func decodeV2(v *Vote, b []byte) ([]byte, error) {
	if len(b) < 1 || b[0] < byte(OriginHistory) || b[0] > byte(OriginWebhookV0) {
		return nil, errBadRecord
	}
	v.Origin = Origin(b[0])
	var h Hook
	var err error
	if h.ID, b, err = decodeString(b[1:]); err != nil {
		return nil, err
	}
	q, n := binary.Uvarint(b)
	if n <= 0 || q > maxQueryEntries {
		return nil, errBadRecord
	}
	b = b[n:]
	if q > 0 {
		h.Query = make(map[string]string, q)
	}
	for range q {
		var k, val string
		if k, b, err = decodeString(b); err != nil {
			return nil, err
		}
		if val, b, err = decodeString(b); err != nil {
			return nil, err
		}
		h.Query[k] = val
	}
	if h.ID != "" || h.Query != nil {
		v.Hook = &h
	}
	return b, nil
}

func decodeString(b []byte) (string, []byte, error) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > maxIDLen || uint64(len(b)-n) < l {
		return "", nil, errBadRecord
	}
	b = b[n:]
	return string(b[:l]), b[l:], nil
}

// seenKey is the bolt key of a vote in the dedup set and the pending
// deliveries: the creation time first, so that iteration is oldest first and
// pruning stops early, then the voter id; together the dedup key.
func seenKey(v Vote) []byte {
	id := v.lane()
	k := make([]byte, 8, 8+len(id))
	putTime(k, v.CreatedAt)
	return append(k, id...)
}

// voterKey is the key of a vote in the per-voter index: the voter id with its
// length first (so that no id is a prefix of another's keys), then the
// creation time, so that a voter's votes near a time are one seek away.
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
func expiryKey(v Vote) []byte {
	id := v.lane()
	k := make([]byte, 16, 16+len(id))
	putTime(k, v.ExpiresAt)
	putTime(k[8:], v.CreatedAt)
	return append(k, id...)
}
