package voterperks

import "time"

// WithAnswerWithin returns cfg with the time an interaction's answer waits
// for its texts set to d, so that the deadline tests need not wait 2 s.
func WithAnswerWithin(cfg Config, d time.Duration) Config {
	cfg.answerWithin = d
	return cfg
}
