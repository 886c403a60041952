package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStatusRecorder(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	r := &StatusRecorder{ResponseWriter: w}
	r.WriteHeader(http.StatusTeapot)
	r.WriteHeader(http.StatusOK) // superfluous: net/http keeps the first too
	assert.Equal(t, http.StatusTeapot, r.Status)

	r = &StatusRecorder{ResponseWriter: httptest.NewRecorder()}
	_, err := r.Write([]byte("x"))
	assert.NoError(t, err)
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, 0, (&StatusRecorder{}).Status, "nothing written: 0")
}
