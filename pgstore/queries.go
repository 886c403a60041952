package pgstore

import "fmt"

// queries are the store's SQL, with the schema's quoted name filled in once.
type queries struct {
	lockVoters, admitRead, admitWrite string
	writeOne, addMonths               string
	notify, lastVoteID, countVotes    string
	saveCheckpoint, checkFence        string
	txLimits                          string
	load, loadCheckpoint, votesByKey  string
	delivered, expired, prune         string
	markReward, markExpiry            string
	stats, board, monthBoard          string
	setReminder, unsetReminder        string
	reminder, reminded                string
	loadHash, saveHash                string
}

// voteCols are the columns a vote is read from, in [scanVote]'s order.
const voteCols = "user_id, platform_id, weight, created_ns, expires_ns, origin, hook, stats"

func newQueries(s string) queries {
	f := func(q string) string { return fmt.Sprintf(q, s) }
	return queries{
		// The voters' locks, taken in key order, serialize the Ingests of
		// one voter; the next statement (a new snapshot) sees every vote
		// committed before. Before them (CASE keeps the order): Ingest
		// commits synchronously whatever the default, and txLimits ($2).
		lockVoters: `SELECT CASE WHEN set_config('synchronous_commit', 'on', true) IS NULL THEN 0
			WHEN set_config('idle_in_transaction_session_timeout', $2, true) IS NULL THEN 0
			WHEN set_config('lock_timeout', $2, true) IS NULL THEN 0
			ELSE (SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS k) END`,
		// Each voter's ledger (NULLs for a new voter) and the creation
		// times of its votes in the dedup set near the new ones.
		admitRead: f(`SELECT q.voter, o.votes, o.total, o.streak, o.best_streak, o.streak_until_ns, o.month_ns,
				o.month_votes, o.month_total, o.last_vote_ns,
				ARRAY(SELECT v.created_ns FROM %[1]s.votes v
					WHERE v.voter = q.voter AND v.seen AND v.created_ns > q.lo - $3 AND v.created_ns < q.hi + $3)
			FROM (SELECT voter, min(c) AS lo, max(c) AS hi FROM unnest($1::text[], $2::bigint[]) AS u(voter, c) GROUP BY voter) q
			LEFT JOIN %[1]s.voters o ON o.voter = q.voter`),
		// The added votes and their voters' last ledgers, in one statement
		// that fails (check_ledger) unless each voter's stored ledger is the
		// one its first vote's Stats were made from: they may come from a
		// cache (the votes count is the ledger's version: each added vote adds one).
		admitWrite: f(`WITH u AS (
				SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::bigint[],
					$8::smallint[], $9::json[], $10::json[], $11::int[], $12::bigint[], $13::int[], $14::int[], $15::bigint[],
					$16::bigint[], $17::int[], $18::bigint[], $19::bigint[]) WITH ORDINALITY
					AS u(key, voter, user_id, platform_id, weight, created_ns, expires_ns, origin, hook, stats, votes, total,
						streak, best_streak, streak_until_ns, month_ns, month_votes, month_total, last_vote_ns, n)
			), iv AS (
				INSERT INTO %[1]s.votes (key, voter, user_id, platform_id, weight, created_ns, expires_ns, origin, hook, stats)
				SELECT key, voter, user_id, platform_id, weight, created_ns, expires_ns, origin, hook, stats FROM u
			), uv AS (
				INSERT INTO %[1]s.voters AS o (voter, votes, total, streak, best_streak, streak_until_ns, month_ns, month_votes, month_total, last_vote_ns)
				SELECT DISTINCT ON (voter) voter, votes, total, streak, best_streak, streak_until_ns, month_ns, month_votes,
					month_total, last_vote_ns FROM u ORDER BY voter, n DESC
				ON CONFLICT (voter) DO UPDATE SET votes = EXCLUDED.votes, total = EXCLUDED.total, streak = EXCLUDED.streak,
					best_streak = EXCLUDED.best_streak, streak_until_ns = EXCLUDED.streak_until_ns, month_ns = EXCLUDED.month_ns,
					month_votes = EXCLUDED.month_votes, month_total = EXCLUDED.month_total, last_vote_ns = EXCLUDED.last_vote_ns
			)
			SELECT %[1]s.check_ledger(bool_and(coalesce((SELECT o.votes FROM %[1]s.voters o WHERE o.voter = g.voter), 0) = g.first - 1))
			FROM (SELECT voter, min(votes) AS first FROM u GROUP BY voter) g`),
		// admitWrite for one vote, in a plain statement: its voter's ledger,
		// failing (check_ledger) unless the stored one is the one before it,
		// and the vote.
		writeOne: f(`WITH w AS (
				INSERT INTO %[1]s.voters AS o (voter, votes, total, streak, best_streak, streak_until_ns, month_ns, month_votes, month_total, last_vote_ns)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
				ON CONFLICT (voter) DO UPDATE SET votes = EXCLUDED.votes, total = EXCLUDED.total, streak = EXCLUDED.streak,
					best_streak = EXCLUDED.best_streak, streak_until_ns = EXCLUDED.streak_until_ns, month_ns = EXCLUDED.month_ns,
					month_votes = EXCLUDED.month_votes, month_total = EXCLUDED.month_total, last_vote_ns = EXCLUDED.last_vote_ns
				WHERE o.votes = EXCLUDED.votes - 1
				RETURNING 1
			), v AS (
				INSERT INTO %[1]s.votes (key, voter, user_id, platform_id, weight, created_ns, expires_ns, origin, hook, stats)
				SELECT $11::text, $1::text, $12::text, $13::text, $14::int, $15::bigint, $16::bigint, $17::smallint, $18::json, $19::json FROM w
			) SELECT %[1]s.check_ledger(EXISTS (SELECT FROM w))`),
		// The rows an ingest adds to voter_past_months ([adds.count]), one a key.
		addMonths: f(`INSERT INTO %[1]s.voter_past_months AS o (month_ns, voter, votes, total, reached_ns)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::bigint[], $5::bigint[])
			ON CONFLICT (month_ns, voter) DO UPDATE SET votes = o.votes + EXCLUDED.votes, total = o.total + EXCLUDED.total,
				reached_ns = greatest(o.reached_ns, EXCLUDED.reached_ns)`),
		// Sent after the ingest's COMMIT, in the same round trip: a
		// notifying transaction holds a cluster-wide lock through its
		// commit, so one that also writes makes every ingest's fsync queue.
		// $2: the payloads ([payloads]).
		notify: `SELECT count(pg_notify($1, p)) FROM unnest($2::text[]) AS p`,
		// Follow's check for votes whose notification was lost: the votes
		// in (lo, settled] and the newest id.
		lastVoteID: f("SELECT coalesce(max(id), 0) FROM %[1]s.votes"),
		countVotes: f("SELECT count(*) FILTER (WHERE id <= $2), coalesce(max(id), $2) FROM %[1]s.votes WHERE id > $1"),
		saveCheckpoint: f(`INSERT INTO %[1]s.checkpoint (id, cursor, last_seen_ns, since_ns) VALUES (1, $1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET cursor = EXCLUDED.cursor, last_seen_ns = EXCLUDED.last_seen_ns, since_ns = EXCLUDED.since_ns`),
		checkFence: f("SELECT %[1]s.check_fence($1)"),
		// Config.TxTimeout (milliseconds) for the rest of the transaction,
		// idle or waiting on a lock.
		txLimits:       `SELECT set_config('idle_in_transaction_session_timeout', $1, true), set_config('lock_timeout', $1, true)`,
		load:           f("SELECT seen, pending, expiry_pending, " + voteCols + " FROM %[1]s.votes WHERE seen OR pending OR expiry_pending ORDER BY id"),
		loadCheckpoint: f("SELECT cursor, last_seen_ns, since_ns FROM %[1]s.checkpoint WHERE id = 1"),
		// The newest row of each key (its voter and time, [keyParts]): a
		// pruned vote added again is a new row.
		votesByKey: f("SELECT id, " + voteCols + ` FROM %[1]s.votes WHERE id IN (SELECT max(v.id) FROM %[1]s.votes v
			JOIN unnest($1::text[], $2::bigint[]) AS u(voter, c) ON v.voter = u.voter AND v.created_ns = u.c GROUP BY v.voter, v.created_ns)
			ORDER BY id`),
		// An expiry already handled by [Store.Expiry] is not pending again.
		// After a Reward transaction the record commits without waiting for
		// the disk: lost in a crash, the redelivery finds the done mark.
		delivered: f(`WITH u AS (UPDATE %[1]s.votes SET pending = false, expiry_pending = expiry_pending OR ($3 AND NOT expiry_done)
				WHERE voter = $1 AND created_ns = $2 RETURNING reward_done)
			SELECT set_config('synchronous_commit', CASE WHEN bool_and(reward_done) THEN 'off' ELSE 'on' END, true) FROM u`),
		expired: f(`WITH u AS (UPDATE %[1]s.votes SET expiry_pending = false WHERE voter = $1 AND created_ns = $2 AND expiry_pending
				RETURNING expiry_done)
			SELECT set_config('synchronous_commit', CASE WHEN bool_and(expiry_done) THEN 'off' ELSE 'on' END, true) FROM u`),
		// Out of the dedup set; then Config.Retention's deletions, a bounded
		// batch a time (the first prune of a long history must not take hours).
		prune: f(`WITH p AS (UPDATE %[1]s.votes SET seen = false WHERE seen AND created_ns < $1 AND expires_ns <= $2)
			DELETE FROM %[1]s.votes WHERE id IN (SELECT id FROM %[1]s.votes
				WHERE NOT (seen OR pending OR expiry_pending) AND created_ns < $3 LIMIT 10000)`),
		// Lock the vote's newest row and mark it done (rolled back with the
		// handler's writes); the previous mark tells a done vote.
		markReward: f(`UPDATE %[1]s.votes v SET reward_done = true FROM (
				SELECT id, reward_done FROM %[1]s.votes WHERE voter = $1 AND created_ns = $2 ORDER BY id DESC LIMIT 1 FOR UPDATE) o
			WHERE v.id = o.id RETURNING o.reward_done`),
		markExpiry: f(`UPDATE %[1]s.votes v SET expiry_done = true FROM (
				SELECT id, expiry_done FROM %[1]s.votes WHERE voter = $1 AND created_ns = $2 ORDER BY id DESC LIMIT 1 FOR UPDATE) o
			WHERE v.id = o.id RETURNING o.expiry_done`),
		stats: f(`SELECT voter, votes, total, streak, best_streak, streak_until_ns, month_ns, month_votes, month_total, last_vote_ns
			FROM %[1]s.voters WHERE voter = $1`),
		board: f("SELECT voter, votes, total, last_vote_ns FROM %[1]s.voters ORDER BY total DESC, last_vote_ns, voter LIMIT $1"),
		// A voter's newest month is in its ledger row, its older ones in
		// voter_past_months: each side n rows of its board index, merged (limited
		// only outside, PostgreSQL reads and sorts every row of the month).
		monthBoard: f(`(SELECT voter, votes, total, reached_ns FROM %[1]s.voter_past_months WHERE month_ns = $1
				ORDER BY total DESC, reached_ns, voter LIMIT $2)
			UNION ALL (SELECT voter, month_votes, month_total, last_vote_ns FROM %[1]s.voters WHERE month_ns = $1
				ORDER BY month_total DESC, last_vote_ns, voter LIMIT $2)
			ORDER BY total DESC, reached_ns, voter LIMIT $2`),
		setReminder:   f("INSERT INTO %[1]s.reminders (user_id) VALUES ($1) ON CONFLICT DO NOTHING"),
		unsetReminder: f("DELETE FROM %[1]s.reminders WHERE user_id = $1"),
		reminder:      f("SELECT last_key FROM %[1]s.reminders WHERE user_id = $1"),
		reminded:      f("UPDATE %[1]s.reminders SET last_key = $2 WHERE user_id = $1"),
		loadHash:      f("SELECT hash FROM %[1]s.command_hash WHERE id = 1"),
		saveHash:      f("INSERT INTO %[1]s.command_hash VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET hash = EXCLUDED.hash"),
	}
}
