package topgg

import "errors"

// ErrNotConfigured means a method was called on a value not made by its
// constructor: a nil or zero Poster, Syncer, Job, Poller, Plugin, Fleet or
// Lease, which has nothing to work with. It is the module's one sentinel for
// this misuse: every package wraps it with its own words (which value, which
// constructor), so errors.Is(err, topgg.ErrNotConfigured) answers for all.
var ErrNotConfigured = errors.New("not made by its constructor")

// ErrNilArgument means a nil value (or an interface holding a nil pointer)
// was given where one is required: a nil *topgg.Client, session, store,
// history, handler, option or Redis client. Every package wraps this one
// sentinel, naming the argument.
var ErrNilArgument = errors.New("nil argument")

// ErrRunning means Run was called while another Run of the same job was
// still going on (a Poster, Job, Poller, Plugin, Lease...): a job runs once
// at a time. Like [ErrNotConfigured], it is the module's one sentinel for
// this misuse, wrapped by every package with its own words.
var ErrRunning = errors.New("already running")
