package webhook

import "github.com/dblkit/go-topgg/internal/clock"

// WithClock returns c with its clock set to clk, for the timestamp tests.
func WithClock(c Config, clk clock.Clock) Config {
	c.clock = clk
	return c
}

// DecodeLegacy decodes a v0 body, for the decoding tests.
var DecodeLegacy = decodeLegacy

// MaxBodyBytes is the largest body a Receiver reads.
const MaxBodyBytes = maxBodyBytes
