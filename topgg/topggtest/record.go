package topggtest

import (
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Request is one request as the server received it.
type Request struct {
	Method string
	// Path is the URL path without the "/api" prefix (a path outside it is kept whole).
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte    // cut at 8 MiB
	At     time.Time // the server clock (see WithNow)
}

func (s *Server) record(r *http.Request, path string, body []byte) {
	req := Request{
		Method: r.Method,
		Path:   path,
		Query:  r.URL.Query(),
		Header: r.Header.Clone(),
		Body:   slices.Clone(body),
		At:     s.now(),
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
}

// Requests returns a copy of every request received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Query, _ = url.ParseQuery(r.Query.Encode()) // a deep copy
		r.Header = r.Header.Clone()
		r.Body = slices.Clone(r.Body)
		out[i] = r
	}
	return out
}
