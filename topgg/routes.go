package topgg

import "slices"

// route is one of the client's routes; every call names its own.
type route uint8

const (
	routeProject route = iota
	routeUpdateProject
	routeCommands
	routeMetrics
	routeMetricsBatch
	routeAnnouncements
	routeVotes
	routeVoteStatus
	routeBots
	routeBot
	routeBotVoters
	routeBotStats
	routePostBotStats
	routeBotCheck
	numRoutes
)

// patterns are the routes' patterns, "METHOD /path/:param"; never modified.
var patterns = [numRoutes]string{
	routeProject:       "GET " + me,
	routeUpdateProject: "PATCH " + me,
	routeCommands:      "PUT " + me + "/commands",
	routeMetrics:       "PATCH " + me + "/metrics",
	routeMetricsBatch:  "POST " + me + "/metrics/batch",
	routeAnnouncements: "POST " + me + "/announcements",
	routeVotes:         "GET " + me + "/votes",
	routeVoteStatus:    "GET " + me + "/votes/:user_id",
	routeBots:          "GET /bots",
	routeBot:           "GET /bots/:bot_id",
	routeBotVoters:     "GET /bots/:bot_id/votes",
	routeBotStats:      "GET /bots/:bot_id/stats",
	routePostBotStats:  "POST /bots/:bot_id/stats",
	routeBotCheck:      "GET /bots/:bot_id/check",
}

// String returns r's pattern, as [Request.Route] names it.
func (r route) String() string { return patterns[r] }

// Routes returns the pattern of every route the client calls, as
// [Request.Route] names it: a fixed set, e.g. to bound a metric's labels.
func Routes() []string { return slices.Clone(patterns[:]) }
