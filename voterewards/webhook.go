package voterewards

import (
	"context"
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// IngestWebhook stores a vote a [webhook.Receiver] delivered, as
// [Poller.Ingest] does; it is webhook.Config's OnVote:
//
//	webhook.New(webhook.Config{Secrets: secrets, OnVote: poller.IngestWebhook})
//
// The vote keeps the delivery's id and query (Vote.Hook) and its origin. A v0
// test delivery is no vote: nil, nothing stored. [ErrInvalidVote] also wraps
// [webhook.ErrMalformedBody] (answered 400, never retried); other errors are
// answered 500, and Top.gg retries.
func (p *Poller) IngestWebhook(ctx context.Context, v webhook.Vote) error {
	if p == nil || p.store == nil {
		return errNotMade
	}
	if v.Test {
		return nil
	}
	err := p.Ingest(ctx, fromWebhook(v))
	if errors.Is(err, ErrInvalidVote) {
		return fmt.Errorf("%w: %w", webhook.ErrMalformedBody, err)
	}
	return err
}

// fromWebhook turns a webhook's vote into the pipeline's.
func fromWebhook(v webhook.Vote) Vote {
	origin := OriginWebhook
	if v.Version == 0 {
		origin = OriginWebhookV0
	}
	return Vote{
		Vote: topgg.Vote{
			UserID: v.UserID, PlatformID: v.PlatformID, Weight: v.Weight,
			CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt,
		},
		Origin: origin,
		Hook:   &Hook{ID: v.ID, Query: v.Query},
	}
}
