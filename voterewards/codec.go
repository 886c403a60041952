package voterewards

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/dblkit/go-topgg/topgg"
)

// The bolt store keeps votes in a small binary form rather than JSON: it is
// decoded for every vote at start and written for every vote read, and a fixed
// layout is easy to bound-check.
//
//	version(1) created(8) expires(8) weight(uvarint) len(uvarint) user_id len(uvarint) platform_id
const codecVersion = 1

// maxIDLen bounds the ids a record may carry, so a damaged record cannot make
// the decoder allocate without limit.
const maxIDLen = 1 << 10

var errBadRecord = errors.New("voterewards: damaged vote record in store")

// timeKey orders times as unsigned big-endian bytes, negative ones too.
func putTime(b []byte, t time.Time) { binary.BigEndian.PutUint64(b, uint64(t.UnixNano())^(1<<63)) }

func getTime(b []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)^(1<<63))).UTC()
}

func encodeVote(v Vote) []byte {
	b := make([]byte, 17, 17+3*binary.MaxVarintLen64+len(v.UserID)+len(v.PlatformID))
	b[0] = codecVersion
	putTime(b[1:9], v.CreatedAt)
	putTime(b[9:17], v.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(max(v.Weight, 0)))
	b = binary.AppendUvarint(b, uint64(len(v.UserID)))
	b = append(b, v.UserID...)
	b = binary.AppendUvarint(b, uint64(len(v.PlatformID)))
	b = append(b, v.PlatformID...)
	return b
}

func decodeVote(b []byte) (Vote, error) {
	if len(b) < 17 || b[0] != codecVersion {
		return Vote{}, errBadRecord
	}
	var tv topgg.Vote
	tv.CreatedAt = getTime(b[1:9])
	tv.ExpiresAt = getTime(b[9:17])
	b = b[17:]
	w, n := binary.Uvarint(b)
	if n <= 0 || w > 1<<31 {
		return Vote{}, errBadRecord
	}
	tv.Weight = int(w)
	b = b[n:]
	var err error
	if tv.UserID, b, err = decodeString(b); err != nil {
		return Vote{}, err
	}
	if tv.PlatformID, b, err = decodeString(b); err != nil {
		return Vote{}, err
	}
	if len(b) != 0 {
		return Vote{}, errBadRecord
	}
	return Vote{Vote: tv, Key: VoteKey(tv)}, nil
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
// pruning stops early, then the user id; together the dedup key.
func seenKey(v Vote) []byte {
	id := v.lane()
	k := make([]byte, 8, 8+len(id))
	putTime(k, v.CreatedAt)
	return append(k, id...)
}

// expiryKey orders pending expiries by ExpiresAt.
func expiryKey(v Vote) []byte {
	id := v.lane()
	k := make([]byte, 16, 16+len(id))
	putTime(k, v.ExpiresAt)
	putTime(k[8:], v.CreatedAt)
	return append(k, id...)
}
