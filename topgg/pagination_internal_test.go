package topgg

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkPageGuard measures what AllVotes spends per page of 100 votes to know
// that its walk progresses (hashing the cursor and the votes, two map inserts).
func BenchmarkPageGuard(b *testing.B) {
	t0 := time.Date(2026, 1, 17, 23, 36, 6, 347320000, time.UTC)
	pages := make([]*VotePage, 1024)
	for i := range pages {
		p := &VotePage{Cursor: "eyJjIjoi" + strconv.Itoa(i) + "In0", Votes: make([]Vote, 100)}
		for j := range p.Votes {
			at := t0.Add(time.Duration(i*100+j) * time.Second)
			p.Votes[j] = Vote{UserID: "800506814562787328", PlatformID: "146183080879613966", Weight: 1, CreatedAt: at, ExpiresAt: at.Add(12 * time.Hour)}
		}
		pages[i] = p
	}
	b.ReportAllocs()
	g := newPageGuard("GET /v1/projects/@me/votes")
	for i := 0; b.Loop(); i++ {
		if i%len(pages) == 0 {
			g = newPageGuard("GET /v1/projects/@me/votes")
		}
		if err := g.next("", pages[i%len(pages)]); err != nil {
			b.Fatal(err)
		}
	}
}
