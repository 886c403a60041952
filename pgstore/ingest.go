package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dblkit/go-topgg/voterewards"
)

// Ingest implements [voterewards.Store] in one transaction (one voter's ingests
// run one at a time across processes; with a checkpoint, a fenced leader write)
// and notifies [Store.Follow] after the commit. Concurrent Ingests without a
// checkpoint share one transaction (a group commit, see [group]), written from
// cached ledgers when they serve (see [Store.write]).
func (s *Store) Ingest(ctx context.Context, cp *voterewards.Checkpoint, votes []voterewards.Vote, grace time.Duration) ([]voterewards.Vote, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: ingest: %w", err)
	}
	r := &ingestReq{votes: s.storable(votes), grace: grace, done: make(chan struct{})}
	if cp == nil {
		return s.submit(ctx, r)
	}
	tok, fenced, err := s.leaderToken(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.write(ctx, []*ingestReq{r}, cp, tok, fenced); err != nil {
		return nil, s.wrap("ingest", err)
	}
	return r.added, nil
}

// write stores the requests' votes (and cp) in one transaction, setting each
// one's added votes, and notifies the added votes after the commit. Without a
// checkpoint it first tries [Store.writeCached]; else it reads the voters'
// ledgers and stored votes near the new ones first.
func (s *Store) write(ctx context.Context, reqs []*ingestReq, cp *voterewards.Checkpoint, tok int64, fenced bool) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer pc.Release()
	conn := pc.Conn()
	var voters []string
	var created []int64
	for _, r := range reqs {
		for _, v := range r.votes {
			voters, created = append(voters, voterOf(v)), append(created, v.CreatedAt.UnixNano())
		}
	}
	if cp == nil && len(voters) > 0 {
		if done, err := s.writeCached(ctx, conn, reqs, voters); done {
			return err
		}
	}
	b := &pgx.Batch{}
	ledger, near := map[string]voterewards.Stats{}, map[string][]int64{}
	if len(voters) > 0 {
		if ledger, near, err = s.read(ctx, conn, voters, created); err != nil {
			return err
		}
	}
	a, _ := admit(reqs, ledger, near)
	return s.finish(ctx, conn, b, len(voters) > 0, reqs, a, voters, cp, tok, fenced)
}

// writeCached writes the requests from their voters' cached ledgers in one
// round trip. It returns false, nothing written, if those cannot serve (a
// vote may be within the dedup window of a stored one: not after its voter's
// last by more) or the database refused them ([ledgerCode]: one changed since).
func (s *Store) writeCached(ctx context.Context, conn *pgx.Conn, reqs []*ingestReq, voters []string) (bool, error) {
	ledger, ok := s.ledgers.get(voters)
	if !ok {
		return false, nil
	}
	a, ok := admit(reqs, ledger, nil)
	if !ok {
		return false, nil
	}
	err := s.finish(ctx, conn, s.begin(ctx, voters), true, reqs, a, voters, nil, 0, false)
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == ledgerCode {
		s.ledgers.served(false)
		return false, nil
	}
	if err == nil {
		s.ledgers.served(true)
	}
	return true, err
}

// read begins the transaction, locks voters and returns their ledgers and the
// creation times of their stored votes near created (created[i] is voters[i]'s).
func (s *Store) read(ctx context.Context, conn *pgx.Conn, voters []string, created []int64) (map[string]voterewards.Stats, map[string][]int64, error) {
	s.reads.Add(1)
	ledger, near := map[string]voterewards.Stats{}, map[string][]int64{}
	b := s.begin(ctx, voters)
	b.Queue(s.q.admitRead, voters, created, int64(voterewards.DedupWindow)).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			st, times, err := scanLedger(rows, true)
			if err != nil {
				return err
			}
			ledger[st.UserID], near[st.UserID] = st, times
		}
		return rows.Err()
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		s.rollback(ctx, conn)
		return nil, nil, err
	}
	return ledger, near, nil
}

// begin returns a batch that begins the transaction and locks voters (their
// locks, taken in key order, serialize the writes of one voter).
func (s *Store) begin(ctx context.Context, voters []string) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(s.q.lockVoters, s.lockKeys(voters), s.txLimit(ctx))
	return b
}

// finish adds to b the writes of the added votes (of reqs, by voters), cp,
// the fence's check and, if began, the commit; it sends b and notifies the
// added votes. Each request keeps its added votes if they committed, else none.
func (s *Store) finish(ctx context.Context, conn *pgx.Conn, b *pgx.Batch, began bool, reqs []*ingestReq,
	a adds, voters []string, cp *voterewards.Checkpoint, tok int64, fenced bool) error {
	keys, err := s.queueAdded(b, a)
	committed := false
	if err == nil {
		if cp != nil {
			b.Queue(s.q.saveCheckpoint, cp.Cursor, ns(cp.LastSeen), ns(cp.Since))
		}
		if fenced {
			b.Queue(s.q.checkFence, tok)
		}
		if began { // else the batch is its own (implicit) transaction
			b.Queue("COMMIT").Exec(func(ct pgconn.CommandTag) error { committed = ct.String() == "COMMIT"; return nil })
		}
		if len(keys) > 0 {
			b.Queue(s.q.notify, s.channel, payloads(keys))
		}
		err = conn.SendBatch(ctx, b).Close()
	}
	if err != nil && committed {
		// Durable: another process's Follow learns these votes at its next check.
		s.log.Warn("pgstore: votes stored, but notifying them failed", "err", s.scrub(err))
		err = nil
	}
	if err != nil {
		for _, r := range reqs {
			r.added = nil
		}
		s.ledgers.forget(voters)
		s.rollback(ctx, conn)
		return err
	}
	s.ledgers.put(a.votes)
	return nil
}

// rollback ends a failed transaction, keeping the connection: Release would
// close one left in a transaction. Bounded even once ctx has ended.
func (s *Store) rollback(ctx context.Context, conn *pgx.Conn) {
	if !conn.IsClosed() && conn.PgConn().TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer cancel()
		_, _ = conn.Exec(rctx, "ROLLBACK")
	}
}

// storable returns votes without those whose ids PostgreSQL's text cannot
// hold or whose times its nanoseconds cannot, each logged: refused alone
// rather than failing the batch on every retry, which would stall the poll.
func (s *Store) storable(votes []voterewards.Vote) []voterewards.Vote {
	bad := func(v voterewards.Vote) bool {
		return !textOK(v.UserID) || !textOK(v.PlatformID) || !nanoOK(v.CreatedAt) || !nanoOK(v.ExpiresAt)
	}
	if !slices.ContainsFunc(votes, bad) {
		return votes
	}
	out := make([]voterewards.Vote, 0, len(votes))
	for _, v := range votes {
		if bad(v) {
			s.log.Warn("pgstore: vote refused: an id PostgreSQL text cannot hold (NUL or invalid UTF-8), or a time outside 1678-2262 (kept as Unix nanoseconds)",
				"user_id", fmt.Sprintf("%q", v.UserID), "platform_id", fmt.Sprintf("%q", v.PlatformID))
			continue
		}
		out = append(out, v)
	}
	return out
}

// nanoOK reports whether t fits the Unix nanoseconds the store keeps.
func nanoOK(t time.Time) bool { return t.Year() > 1677 && t.Year() < 2262 }

// textOK reports whether PostgreSQL's text can hold s.
func textOK(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// admit sets each request's votes to add, with their Stats made from ledger
// (updated to the voters' last Stats), and returns them all: a vote within
// the dedup window of one stored (near) or added before it is dropped. With
// near nil (the stored votes unknown) it returns false if a vote may be
// within the window of a stored one: not after the voter's last vote by more.
func admit(reqs []*ingestReq, ledger map[string]voterewards.Stats, near map[string][]int64) (adds, bool) {
	known := near != nil
	if !known {
		near = map[string][]int64{}
	}
	var all adds
	for _, r := range reqs {
		r.added = nil
		for _, v := range r.votes {
			id, c := voterOf(v), v.CreatedAt.UnixNano()
			if slices.ContainsFunc(near[id], func(o int64) bool { return within(o, c) }) {
				continue
			}
			st := ledger[id]
			// Every stored vote of a voter was made at or before its last one.
			if !known && st.Votes > 0 && v.CreatedAt.Before(st.LastVote.Add(voterewards.DedupWindow)) {
				return adds{}, false
			}
			near[id] = append(near[id], c)
			v.Stats = st.Add(v, r.grace)
			ledger[id] = v.Stats
			r.added = append(r.added, v)
			all.count(id, st, v)
		}
	}
	return all, true
}

// within reports whether two creation times are one vote.
func within(a, b int64) bool {
	d := a - b
	return d < int64(voterewards.DedupWindow) && d > -int64(voterewards.DedupWindow)
}

// lockKeys returns the voters' advisory lock keys, distinct and sorted (one
// lock order: no deadlock).
func (s *Store) lockKeys(voters []string) []int64 {
	keys := make([]int64, 0, len(voters))
	for _, v := range voters {
		h := fnv.New64a()
		_, _ = h.Write([]byte(s.lockNS))
		_, _ = h.Write([]byte(v))
		keys = append(keys, int64(h.Sum64()))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// queueAdded queues the writes of the added votes (the votes, their voters'
// last ledgers, their rows of voter_past_months) and returns their keys, to notify.
func (s *Store) queueAdded(b *pgx.Batch, a adds) ([]string, error) {
	if len(a.votes) == 0 {
		return nil, nil
	}
	var va voteArgs
	for _, v := range a.votes {
		if err := va.add(v); err != nil {
			return nil, err
		}
	}
	if len(a.votes) == 1 { // a webhook's: a plain statement costs half the set-based one
		b.Queue(s.q.writeOne, va.voter[0], va.votes[0], va.total[0], va.streak[0], va.best[0], va.until[0], va.month[0],
			va.monthVotes[0], va.monthTotal[0], va.last[0], va.key[0], va.userID[0], va.platformID[0], va.weight[0], va.created[0],
			va.expires[0], va.origin[0], jsonArray(va.hook)[0], jsonArray(va.stats)[0])
	} else {
		// Its generic plan (no scan: an unnest, lookups and inserts by key) suits
		// every batch; left to choose, PostgreSQL plans it again for each batch,
		// which costs more than running it.
		b.Queue("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
		b.Queue(s.q.admitWrite, va.args()...)
	}
	if len(a.months) > 0 {
		b.Queue(s.q.addMonths, a.monthArgs()...)
	}
	return va.key, nil
}

// maxPayload is the longest NOTIFY payload PostgreSQL takes.
const maxPayload = 7999

// payloads returns keys as JSON arrays (a key may hold any character), in
// order, each within PostgreSQL's 8000 bytes a notification: a key's JSON is
// at most about 6200 bytes (voterewards bounds ids to 1 KiB).
func payloads(keys []string) []string {
	var out []string
	buf := []byte{'['}
	for _, k := range keys {
		j, _ := json.Marshal(k) // a string always encodes
		// The key must fit with the "," before it and the "]" after it.
		if len(buf) > 1 && len(buf)+1+len(j)+1 > maxPayload {
			out = append(out, string(append(buf, ']')))
			buf = buf[:1]
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, j...)
	}
	return append(out, string(append(buf, ']')))
}
