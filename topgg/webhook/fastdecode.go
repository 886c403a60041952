package webhook

import (
	"time"
	"unicode/utf8"
)

// fastDecode decodes the common v1 bodies (every member a known one, strings
// without escapes, no nulls) into w without reflection, and reports whether
// it did. On false, w is partly filled and the caller decodes again with
// encoding/json, which is the reference: on every input that fastDecode
// takes, both give the same result (FuzzFastDecode checks it). It exists for
// speed: encoding/json takes several microseconds and a score of allocations
// for a vote.create.
func fastDecode(body []byte, w *wireEvent) bool {
	s := scanner{b: body}
	if len(body) <= copyWholeMax {
		// One copy serves every string: they are substrings of it.
		s.all = string(body)
	}
	ok := s.object(func(ks, ke int) bool {
		switch string(body[ks:ke]) {
		case "type":
			t, ok := s.str()
			w.Type = EventType(t)
			return ok
		case "data":
			return s.data(&w.Data)
		}
		return false
	})
	s.ws()
	return ok && s.i == len(body)
}

// copyWholeMax bounds the body that is copied whole for its strings: a
// larger one (padded) would be kept alive by a short field.
const copyWholeMax = 4 << 10

// scanner reads JSON from b at i. Each method skips white space first and
// returns false for what it does not take.
type scanner struct {
	b   []byte
	i   int
	all string // string(b), or "" to copy each string
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// span returns the bounds of the contents of a string without escapes,
// control bytes or invalid UTF-8.
func (s *scanner) span() (start, end int, ok bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return 0, 0, false
	}
	start = s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(s.b[start:j]) {
				return 0, 0, false
			}
			s.i = j + 1
			return start, j, true
		case c == '\\' || c < 0x20:
			return 0, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, 0, false
}

func (s *scanner) sub(start, end int) string {
	if s.all != "" {
		return s.all[start:end]
	}
	return string(s.b[start:end])
}

func (s *scanner) str() (string, bool) {
	start, end, ok := s.span()
	return s.sub(start, end), ok
}

// object reads {"key": value, ...}, handing each key's bounds to field, which
// reads the value.
func (s *scanner) object(field func(ks, ke int) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		ks, ke, ok := s.span()
		if !ok || !s.next(':') || !field(ks, ke) {
			return false
		}
		if !s.next(',') {
			return s.next('}')
		}
	}
}

// int reads an integer of at most 15 digits, no fraction or exponent.
// Complexity: one branch per rule of JSON's number grammar; splitting it would scatter the grammar.
func (s *scanner) int() (int, bool) {
	s.ws()
	j := s.i
	neg := j < len(s.b) && s.b[j] == '-'
	if neg {
		j++
	}
	start := j
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	n := j - start
	if n == 0 || n > 15 || (n > 1 && s.b[start] == '0') {
		return 0, false
	}
	if j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E') {
		return 0, false
	}
	v := 0
	for _, c := range s.b[start:j] {
		v = v*10 + int(c-'0')
	}
	s.i = j
	if neg {
		v = -v
	}
	return v, true
}

func (s *scanner) data(d *wireData) bool {
	return s.object(func(ks, ke int) bool {
		var dst *string
		switch string(s.b[ks:ke]) {
		case "id":
			dst = &d.ID
		case "connection_id":
			dst = &d.ConnectionID
		case "webhook_secret":
			v, ok := s.str()
			d.WebhookSecret = Secret(v)
			return ok
		case "weight":
			v, ok := s.int()
			d.Weight = v
			return ok
		case "created_at":
			return s.timestamp(&d.CreatedAt)
		case "expires_at":
			return s.timestamp(&d.ExpiresAt)
		case "project":
			return s.project(&d.Project)
		case "user":
			return s.user(&d.User)
		case "query":
			return s.query(&d.Query)
		default:
			return false
		}
		v, ok := s.str()
		*dst = v
		return ok
	})
}

// timestamp reads a timestamp exactly as encoding/json does: by
// time.Time.UnmarshalJSON on the quoted literal.
func (s *scanner) timestamp(t *time.Time) bool {
	start, end, ok := s.span()
	return ok && t.UnmarshalJSON(s.b[start-1:end+1]) == nil
}

func (s *scanner) project(p *Project) bool {
	return s.object(func(ks, ke int) bool {
		var dst *string
		switch string(s.b[ks:ke]) {
		case "id":
			dst = &p.ID
		case "type":
			dst = &p.Type
		case "platform":
			dst = &p.Platform
		case "platform_id":
			dst = &p.PlatformID
		default:
			return false
		}
		v, ok := s.str()
		*dst = v
		return ok
	})
}

func (s *scanner) user(u *User) bool {
	return s.object(func(ks, ke int) bool {
		var dst *string
		switch string(s.b[ks:ke]) {
		case "id":
			dst = &u.ID
		case "platform_id":
			dst = &u.PlatformID
		case "name":
			dst = &u.Name
		case "avatar_url":
			dst = &u.AvatarURL
		default:
			return false
		}
		v, ok := s.str()
		*dst = v
		return ok
	})
}

// query reads an object of strings into *m, made on first use and added to
// after, as encoding/json does.
func (s *scanner) query(m *map[string]string) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '{' && *m == nil {
		*m = make(map[string]string, 1)
	}
	return s.object(func(ks, ke int) bool {
		v, ok := s.str()
		(*m)[s.sub(ks, ke)] = v
		return ok
	})
}
