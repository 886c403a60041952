package boltstate

import (
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
)

// StoreFile is the name of the bbolt file Open keeps in its directory, for
// the tests that damage it.
const StoreFile = storeFile

// newVote makes a history vote of v, its times in UTC without monotonic
// readings, as voterewards' sanitize leaves them.
func newVote(v topgg.Vote) voterewards.Vote {
	v.CreatedAt = v.CreatedAt.UTC().Round(0)
	v.ExpiresAt = v.ExpiresAt.UTC().Round(0)
	return voterewards.Vote{Vote: v, Origin: voterewards.OriginHistory}
}
