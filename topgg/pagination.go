package topgg

import (
	"fmt"
	"hash/maphash"
	"strconv"
)

// maxPages bounds one walk over the vote history, far above any project's year.
const maxPages = 1 << 20

// pageGuard ends a walk over pages that does not progress: it remembers a
// hash of every cursor and every page's votes, so a cursor that comes back and
// a page that repeats are caught at once.
type pageGuard struct {
	op      string
	seed    maphash.Seed
	pages   int
	cursors map[uint64]struct{}
	votes   map[uint64]struct{}
}

func newPageGuard(op string) *pageGuard {
	return &pageGuard{op: op, seed: maphash.MakeSeed(), cursors: map[uint64]struct{}{}, votes: map[uint64]struct{}{}}
}

// next checks a page whose cursor is to be followed.
func (g *pageGuard) next(sent string, p *VotePage) error {
	g.pages++
	if g.pages >= maxPages {
		return g.fail("more than " + strconv.Itoa(maxPages) + " pages")
	}
	c := maphash.String(g.seed, p.Cursor)
	if _, seen := g.cursors[c]; seen {
		if p.Cursor == sent {
			return g.fail("cursor did not advance after a page of " + strconv.Itoa(len(p.Votes)) + " votes")
		}
		return g.fail("cursor came back after other pages (a cycle)")
	}
	v := g.hashVotes(p.Votes)
	if _, seen := g.votes[v]; seen {
		return g.fail("page repeats the votes of an earlier page under a new cursor")
	}
	g.cursors[c] = struct{}{}
	g.votes[v] = struct{}{}
	return nil
}

// fail names the call, the page (1-based) and the problem, never a cursor.
func (g *pageGuard) fail(problem string) error {
	return fmt.Errorf("%w: %s: page %d: %s", ErrPagination, g.op, g.pages, problem)
}

// hashVotes hashes every field of every vote, in order.
func (g *pageGuard) hashVotes(votes []Vote) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	buf := make([]byte, 0, 64)
	for _, v := range votes {
		buf = append(buf[:0], v.UserID...)
		buf = append(buf, 0)
		buf = append(buf, v.PlatformID...)
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, int64(v.Weight), 10)
		buf, _ = v.CreatedAt.AppendBinary(buf) // fails only for offsets no JSON time carries
		buf, _ = v.ExpiresAt.AppendBinary(buf)
		_, _ = h.Write(buf)
	}
	return h.Sum64()
}
