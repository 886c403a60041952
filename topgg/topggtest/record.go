package topggtest

import (
	"github.com/dblkit/go-topgg/internal/httpx"
)

// Request is one request the server received, as sent; Path is under the API
// root, without "/api" (a path outside it is kept whole), Body is cut at 8 MiB
// and At is on the server clock (see WithNow). The same type as
// discordtest.Request.
type Request = httpx.Request

// Requests returns a copy of every request received, in arrival order.
func (s *Server) Requests() []Request { return s.requests.All() }
