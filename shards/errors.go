package shards

import "errors"

// Sentinel errors, returned wrapped; test them with errors.Is.
var (
	// ErrClosed means the Group was closed, or its Open was cancelled: its
	// sessions do not connect again.
	ErrClosed = errors.New("shards: group closed")
	// ErrOpened means Open was called again: a Group is opened once.
	ErrOpened = errors.New("shards: group already opened")
)
