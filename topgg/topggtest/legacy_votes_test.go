package topggtest

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLegacyVoters(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	own := DiscordBot().PlatformID
	s.AddVote(
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-3 * time.Hour)},
		Vote{UserID: "u2", PlatformID: "d2", Weight: 2, CreatedAt: t0.Add(-2 * time.Hour)},
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-time.Hour)},
	)
	r := v0(t, s, http.MethodGet, "/bots/"+own+"/votes", nil)
	requireStatus(t, r, http.StatusOK)
	var voters []map[string]string
	r.decode(t, &voters)
	require.Len(t, voters, 2, "unique voters")
	require.Equal(t, "d1", voters[0]["id"], "most recent first")
	require.Equal(t, "d2", voters[1]["id"])
	for _, v := range voters {
		require.NotEmpty(t, v["username"])
		require.Len(t, v["avatar"], 32)
	}
}

func TestLegacyVotersCap(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	for i := range 1005 {
		s.AddVote(Vote{PlatformID: strconv.Itoa(i), CreatedAt: t0.Add(time.Duration(i) * time.Second)})
	}
	s.AddVote(Vote{PlatformID: "1004", CreatedAt: t0.Add(time.Hour)}) // a double vote
	r := v0(t, s, http.MethodGet, "/bots/"+DiscordBot().PlatformID+"/votes", nil)
	var voters []map[string]string
	r.decode(t, &voters)
	require.Len(t, voters, 1000)
	require.Equal(t, "1004", voters[0]["id"])
	require.Equal(t, "5", voters[999]["id"])
}

func TestLegacyOwnBotOnly(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	require.NoError(t, s.AddBot(Bot{ID: "42"}))
	for _, p := range []string{"/bots/42/votes", "/bots/42/check?userId=1"} {
		requireLegacyError(t, v0(t, s, http.MethodGet, p, nil), http.StatusForbidden)
	}
	requireLegacyError(t, v0(t, s, http.MethodPost, "/bots/42/stats", `{"server_count":1}`), http.StatusForbidden)
	for _, p := range []string{"/bots/7/votes", "/bots/7/check?userId=1", "/bots/7/stats"} {
		requireLegacyError(t, v0(t, s, http.MethodGet, p, nil), http.StatusNotFound)
	}
}

func TestLegacyCheck(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	own := DiscordBot().PlatformID
	s.AddVote(
		Vote{UserID: "u1", PlatformID: "d1", CreatedAt: t0.Add(-12*time.Hour + time.Second)},
		Vote{UserID: "u2", PlatformID: "d2", CreatedAt: t0.Add(-12 * time.Hour)},
	)
	check := func(user string) int {
		r := v0(t, s, http.MethodGet, "/bots/"+own+"/check?userId="+user, nil)
		requireStatus(t, r, http.StatusOK)
		var body map[string]int
		r.decode(t, &body)
		return body["voted"]
	}
	require.Equal(t, 1, check("d1"))
	require.Equal(t, 0, check("d2"), "exactly 12 hours ago is outside")
	require.Equal(t, 0, check("u1"), "v0 checks the Discord id")
	require.Equal(t, 0, check("nobody"))
	clock.Advance(time.Second)
	require.Equal(t, 0, check("d1"))
	requireLegacyError(t, v0(t, s, http.MethodGet, "/bots/"+own+"/check", nil), http.StatusBadRequest)
}

// TestLegacyVotesAndCheckOfTheToken: GET /bots/votes and /bots/check?userId=
// act on the token's bot, as @top-gg/sdk 3.1.6 getVotes and hasVoted call
// them (bare token) and topggpy 1.x get_user_vote does (Bearer).
func TestLegacyVotesAndCheckOfTheToken(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := newTestServer(t, WithNow(clock.Now))
	s.AddVote(Vote{UserID: "u1", PlatformID: "205680187394752512", CreatedAt: t0.Add(-time.Hour)})

	r := sendAs(t, s, http.MethodGet, "/bots/votes", nodeSDK, s.Token(), "")
	requireStatus(t, r, http.StatusOK)
	var voters []map[string]string
	r.decode(t, &voters)
	require.Len(t, voters, 1)
	require.Equal(t, "205680187394752512", voters[0]["id"])

	check := func(header map[string]string, auth, user string) int {
		r := sendAs(t, s, http.MethodGet, "/bots/check?userId="+user, header, auth, "")
		requireStatus(t, r, http.StatusOK)
		var body map[string]int
		r.decode(t, &body)
		return body["voted"]
	}
	require.Equal(t, 1, check(nodeSDK, s.Token(), "205680187394752512"))
	require.Equal(t, 0, check(nodeSDK, s.Token(), "395526710101278721"))
	require.Equal(t, 1, check(pythonSDK, "Bearer "+s.Token(), "205680187394752512"))
	requireLegacyError(t, sendAs(t, s, http.MethodGet, "/bots/check", nodeSDK, s.Token(), ""), http.StatusBadRequest)

	for _, r := range s.Requests() {
		require.Contains(t, []string{"/bots/votes", "/bots/check"}, r.Path, "recorded as sent")
	}
}

// TestWeekend: GET /weekend, which @top-gg/sdk 3.1.6 isWeekend and topggpy
// get_weekend_status call, says whether it is Friday to Sunday (UTC) on the
// server clock; it needs the token and is outside the /bots limit.
func TestWeekend(t *testing.T) {
	t.Parallel()
	clock := newClock() // t0 is a Saturday
	s := newTestServer(t, WithNow(clock.Now), WithLegacyLimit(1, time.Hour))
	weekend := func() bool {
		r := sendAs(t, s, http.MethodGet, "/weekend", pythonSDK, "Bearer "+s.Token(), "")
		requireStatus(t, r, http.StatusOK)
		var body map[string]bool
		r.decode(t, &body)
		return body["is_weekend"]
	}
	at := func(d time.Time) { clock.Advance(d.Sub(clock.Now())) }
	require.True(t, weekend())
	at(time.Date(2026, 1, 19, 0, 0, 0, 0, time.UTC)) // Monday
	require.False(t, weekend())
	at(time.Date(2026, 1, 23, 0, 30, 0, 0, time.FixedZone("CET", 3600))) // Friday in CET, Thursday in UTC
	require.False(t, weekend())
	at(time.Date(2026, 1, 23, 0, 0, 0, 0, time.UTC)) // Friday
	require.True(t, weekend())
	at(time.Date(2026, 1, 25, 23, 59, 59, 0, time.UTC)) // Sunday
	require.True(t, weekend())
	requireStatus(t, sendAs(t, s, http.MethodGet, "/weekend", nodeSDK, s.Token(), ""), http.StatusOK)
	requireLegacyError(t, sendAs(t, s, http.MethodGet, "/weekend", nodeSDK, "wrong", ""), http.StatusUnauthorized)
}
