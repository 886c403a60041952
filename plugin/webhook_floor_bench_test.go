package plugin_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// newFloorReceiver starts the floor BenchmarkWebhookLatency compares the
// plugin with: a bare receiver written with net/http, crypto/hmac,
// encoding/json and bbolt (fsync on, bbolt's default) and nothing of this
// module. Per delivery: it reads the body (bounded), checks X-Topgg-Signature
// (t=<unix>,v1=<hex HMAC-SHA256 of "t.body">, the time within 5 minutes),
// decodes the vote, stores it in one bbolt transaction unless its id is
// already there (dedup), calls onReward and answers 204. It returns the
// receiver's URL.
func newFloorReceiver(b *testing.B, secret string, onReward func(voteID string)) string {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	bucket := []byte("votes")
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !floorSigned(secret, r.Header.Get("X-Topgg-Signature"), body) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				ID        string    `json:"id"`
				CreatedAt time.Time `json:"created_at"`
				User      struct {
					PlatformID string `json:"platform_id"`
				} `json:"user"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "vote.create" || ev.Data.ID == "" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		fresh := false
		err = db.Update(func(tx *bolt.Tx) error {
			bk := tx.Bucket(bucket)
			if bk.Get([]byte(ev.Data.ID)) != nil {
				return nil
			}
			fresh = true
			return bk.Put([]byte(ev.Data.ID), body)
		})
		if err != nil {
			http.Error(w, "store", http.StatusInternalServerError)
			return
		}
		if fresh {
			onReward(ev.Data.ID)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// floorSigned checks a Top.gg v1 signature header over body.
func floorSigned(secret, header string, body []byte) bool {
	var ts, sig string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(t, 0)).Abs() > 5*time.Minute {
		return false
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return hmac.Equal(m.Sum(nil), want)
}
