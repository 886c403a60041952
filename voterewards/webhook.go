package voterewards

import (
	"context"
	"errors"
	"fmt"

	"github.com/dblkit/go-topgg/topgg"
	"github.com/dblkit/go-topgg/topgg/webhook"
)

// IngestWebhook stores a vote a [webhook.Receiver] delivered, as
// [Poller.Ingest] stores any vote: it has the shape of webhook.Config's
// OnVote, so that a receiver feeds a poller with
//
//	webhook.New(webhook.Config{Secrets: secrets, OnVote: poller.IngestWebhook})
//
// The vote keeps the delivery's id and query (in Vote.Hook) and its origin
// ([OriginWebhook] for v1, [OriginWebhookV0] for a legacy delivery, whose
// creation time is its receipt). A v0 test delivery is no vote: nothing is
// stored, and nil answers it 204. A vote the pipeline can never take
// ([ErrInvalidVote]) also wraps [webhook.ErrMalformedBody], which the
// receiver answers 400 (never retried); any other error is answered 500, and
// Top.gg retries.
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

// fromWebhook turns a webhook's vote into the pipeline's. A v0 vote has no
// times: Ingest takes its receipt time.
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
