// This file: the record of the requests a fake service received, for both
// fakes: topggtest.Request and discordtest.Request are this package's.

package httpx

import (
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Request is one request a fake service received.
type Request struct {
	Method string
	// Path is the URL path (topggtest: under the API root, without "/api";
	// discordtest: whole, "/api/v9/users/@me").
	Path   string
	Query  url.Values
	Header http.Header // discordtest: the Authorization value is "[redacted]"
	Body   []byte
	At     time.Time // when it arrived, on the service's clock
	// Status is the status answered; 0 while the request is in flight, or
	// when the connection was dropped.
	Status int
}

// Requests records the requests of one fake service. Its zero value is
// ready; it is safe for concurrent use.
type Requests struct {
	mu   sync.Mutex
	list []Request
}

// Add records req as it arrives and returns the function that records the
// status of its answer.
func (rs *Requests) Add(req Request) (answered func(status int)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	i := len(rs.list)
	rs.list = append(rs.list, req)
	return func(status int) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.list[i].Status = status
	}
}

// All returns a copy of every request, in arrival order.
func (rs *Requests) All() []Request {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := slices.Clone(rs.list)
	for i, r := range out {
		r.Query, _ = url.ParseQuery(r.Query.Encode()) // a deep copy
		r.Header = r.Header.Clone()
		r.Body = slices.Clone(r.Body)
		out[i] = r
	}
	return out
}
