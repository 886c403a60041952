package plugin_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dblkit/go-topgg/plugin"
	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/voterewards"
	"github.com/dblkit/go-topgg/voterperks"
)

// TestWithVoterPerksChecksItsWiring: the perks need vote polling (a
// ConfigError naming the field otherwise) and a valid bot id and role (the
// voterperks error); without the option Perks is nil. The end-to-end tests
// are voterperks's (one process and a fleet, through this option).
func TestWithVoterPerksChecksItsWiring(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldSpec{})
	cfg := w.config()
	good := plugin.VoterPerks{BotID: w.dc.ApplicationID(), Reminders: true,
		Role: &voterperks.Role{GuildID: "1", RoleID: "2"}}

	off := cfg
	off.VotePollInterval = new(time.Duration(0))
	_, err := plugin.New(w.client, off, plugin.WithState(w.state()), plugin.WithVoterPerks(good))
	var ce *plugin.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "plugin.Config.VotePollInterval", ce.Field)

	bad := good
	bad.Role = &voterperks.Role{GuildID: "guild"}
	_, err = plugin.New(w.client, cfg, plugin.WithState(w.state()), plugin.WithVoterPerks(bad))
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "voterperks.Config.Role", ce.Field)

	p, err := plugin.New(w.client, cfg, plugin.WithState(w.state()), plugin.WithVoterPerks(good))
	require.NoError(t, err)
	require.NotNil(t, p.Perks())
	assert.ErrorIs(t, p.Perks().OnReward(t.Context(), vote1()), voterperks.ErrNoSession, "no session attached yet")
	plain, err := plugin.New(w.client, cfg, plugin.WithState(w.state()))
	require.NoError(t, err)
	assert.Nil(t, plain.Perks())
}

// vote1 is an active vote of a user, as the handlers get it.
func vote1() voterewards.Vote {
	now := time.Now().UTC()
	return voterewards.Vote{Vote: topgg.Vote{UserID: "100000000000000001", PlatformID: "300000000000000001",
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, Origin: voterewards.OriginHistory}
}
