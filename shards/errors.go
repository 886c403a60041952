package shards

import "errors"

// Sentinel errors, returned wrapped; test them with errors.Is.
var (
	// ErrClosed means the Group was closed, or its Open was cancelled: its
	// sessions do not connect again.
	ErrClosed = errors.New("shards: group closed")
	// ErrOpened means Open was called again: a Group is opened once.
	ErrOpened = errors.New("shards: group already opened")
	// ErrNotHere means a guild is on a shard this Group does not run (see
	// WithShardIDs): another process of the bot has its session.
	ErrNotHere = errors.New("shards: guild on a shard of another process")
)
