package commands_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/internal/testkit"
	"github.com/dblkit/go-topgg/internal/testlog"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

const commandsPath = "/v1/projects/@me/commands"

// fastRetries keeps the client's retries (3 attempts) but makes their waits tiny.
func fastRetries() topgg.RetryPolicy {
	return topgg.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, MaxRetryAfter: 10 * time.Millisecond}
}

// newService starts a fake Top.gg and a real client for it.
func newService(t *testing.T, opts ...topggtest.Option) (*topggtest.Server, *topgg.Client) {
	t.Helper()
	srv, err := topggtest.NewServer(opts...)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	c, err := topgg.New(srv.Token(),
		topgg.WithBaseURL(srv.URL),
		topgg.WithHTTPClient(srv.Client()),
		topgg.WithRetryPolicy(fastRetries()),
	)
	require.NoError(t, err)
	return srv, c
}

// countRequests counts the requests srv received with method on path.
func countRequests(srv *topggtest.Server, method, path string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// putBodies returns the bodies of every PUT of commands, in order.
func putBodies(srv *topggtest.Server) [][]byte {
	var out [][]byte
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPut && r.Path == commandsPath {
			out = append(out, r.Body)
		}
	}
	return out
}

// logBuffer collects the log lines the code under test writes from its goroutines.
type logBuffer = testlog.Buffer

func newLogger(w *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func ptr[T any](v T) *T { return &v }

// botCommands returns the commands a realistic bot registers, as Discord
// echoes them back after registration (with the ids and version Discord
// assigns). Every call returns fresh values.
func botCommands() []*discordgo.ApplicationCommand {
	return []*discordgo.ApplicationCommand{
		{
			ID:            "1200000000000000001",
			ApplicationID: "264811613708746752",
			Version:       "1200000000000000010",
			Type:          discordgo.ChatApplicationCommand,
			Name:          "vote",
			NameLocalizations: &map[discordgo.Locale]string{
				discordgo.German: "abstimmen",
				discordgo.French: "voter",
			},
			Description: "Vote for the bot & get a reward",
			DescriptionLocalizations: &map[discordgo.Locale]string{
				discordgo.German: "Stimme für den Bot ab",
				discordgo.French: "Votez pour le bot",
			},
			DMPermission:     ptr(true),
			NSFW:             ptr(false),
			Contexts:         &[]discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM},
			IntegrationTypes: &[]discordgo.ApplicationIntegrationType{discordgo.ApplicationIntegrationGuildInstall},
		},
		{
			ID:                       "1200000000000000002",
			ApplicationID:            "264811613708746752",
			GuildID:                  "",
			Version:                  "1200000000000000011",
			Name:                     "config",
			Description:              "Configure the bot",
			DefaultMemberPermissions: ptr(int64(discordgo.PermissionManageGuild)),
			Options: []*discordgo.ApplicationCommandOption{
				{
					Type:        discordgo.ApplicationCommandOptionSubCommandGroup,
					Name:        "rewards",
					Description: "Vote rewards",
					Options: []*discordgo.ApplicationCommandOption{
						{
							Type:        discordgo.ApplicationCommandOptionSubCommand,
							Name:        "set",
							Description: "Set the reward",
							Options: []*discordgo.ApplicationCommandOption{
								{
									Type:        discordgo.ApplicationCommandOptionString,
									Name:        "kind",
									Description: "What a voter gets",
									DescriptionLocalizations: map[discordgo.Locale]string{
										discordgo.German: "Was ein Wähler bekommt",
									},
									Required: true,
									Choices: []*discordgo.ApplicationCommandOptionChoice{
										{Name: "Role", Value: "role", NameLocalizations: map[discordgo.Locale]string{discordgo.German: "Rolle"}},
										{Name: "Coins", Value: "coins"},
									},
								},
								{
									Type:        discordgo.ApplicationCommandOptionInteger,
									Name:        "hours",
									Description: "How long it lasts",
									MinValue:    ptr(1.0),
									MaxValue:    48,
								},
								{
									Type:        discordgo.ApplicationCommandOptionNumber,
									Name:        "multiplier",
									Description: "Weekend multiplier",
									Choices: []*discordgo.ApplicationCommandOptionChoice{
										{Name: "double", Value: 2},
										{Name: "one and a half", Value: 1.5},
									},
								},
								{
									Type:         discordgo.ApplicationCommandOptionChannel,
									Name:         "log",
									Description:  "Where to log votes",
									ChannelTypes: []discordgo.ChannelType{discordgo.ChannelTypeGuildText, discordgo.ChannelTypeGuildNews},
								},
								{
									Type:         discordgo.ApplicationCommandOptionString,
									Name:         "role",
									Description:  "Role name",
									Autocomplete: true,
									MinLength:    ptr(0),
									MaxLength:    100,
								},
							},
						},
					},
				},
			},
		},
		{
			ID:            "1200000000000000003",
			ApplicationID: "264811613708746752",
			Version:       "1200000000000000012",
			Type:          discordgo.UserApplicationCommand,
			Name:          "Check vote",
		},
	}
}

// wantBotCommands is what the listing must receive for botCommands: the same
// definitions without what Discord assigned, written out by hand.
const wantBotCommands = `[
  {
    "type": 1,
    "name": "vote",
    "name_localizations": {"de": "abstimmen", "fr": "voter"},
    "description": "Vote for the bot & get a reward",
    "description_localizations": {"de": "Stimme für den Bot ab", "fr": "Votez pour le bot"},
    "dm_permission": true,
    "nsfw": false,
    "contexts": [0, 1],
    "integration_types": [0]
  },
  {
    "type": 1,
    "name": "config",
    "description": "Configure the bot",
    "default_member_permissions": "32",
    "options": [
      {
        "type": 2, "name": "rewards", "description": "Vote rewards",
        "options": [
          {
            "type": 1, "name": "set", "description": "Set the reward",
            "options": [
              {
                "type": 3, "name": "kind", "description": "What a voter gets",
                "description_localizations": {"de": "Was ein Wähler bekommt"},
                "required": true,
                "choices": [
                  {"name": "Role", "value": "role", "name_localizations": {"de": "Rolle"}},
                  {"name": "Coins", "value": "coins"}
                ]
              },
              {"type": 4, "name": "hours", "description": "How long it lasts", "min_value": 1, "max_value": 48},
              {
                "type": 10, "name": "multiplier", "description": "Weekend multiplier",
                "choices": [{"name": "double", "value": 2}, {"name": "one and a half", "value": 1.5}]
              },
              {"type": 7, "name": "log", "description": "Where to log votes", "channel_types": [0, 5]},
              {"type": 3, "name": "role", "description": "Role name", "autocomplete": true, "min_length": 0, "max_length": 100}
            ]
          }
        ]
      }
    ]
  },
  {"type": 2, "name": "Check vote"}
]`

// jsonValue decodes b for a semantic comparison.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v), "body: %s", b)
	return v
}

// TestMain fails the package if a test leaves a goroutine behind: a Syncer
// starts none, and every discordgo session and fake server is closed.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// requireConfigError requires err to be a *topgg.ConfigError naming field.
func requireConfigError(t *testing.T, err error, field string) {
	t.Helper()
	var ce *topgg.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, field, ce.Field)
}
